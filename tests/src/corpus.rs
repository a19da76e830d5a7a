//! The conformance corpus: deterministic builders of valid frames for every root, of malformed
//! frames with the violation each must produce, and of the files under `vectors/corpus/`.
//!
//! Valid frames are written with the checked [`Encoder`], so every one of them also passes the
//! write-side rules. Their values lean on what careless readers get wrong: integer extremes of
//! every width, 64-bit values either side of 2^53, absent versus present-zero optionals, text with
//! an embedded NUL and multi-byte characters, bytes that are not UTF-8, -0.0, subnormals, the
//! largest finite floats, NaN payloads, infinities, and extreme DATETIME values.
//!
//! Malformed frames are built without the encoder's checks (packing the owned form directly,
//! through the generated table builders, or by patching the bytes of a valid frame), because the
//! encoder refuses to write most of them.
//!
//! Layout of `vectors/corpus/`:
//!
//! * `<name>.<ext>`: one valid frame, the extension naming its root (`nxcm`, `nxsm`, ...).
//! * `malformed/<name>.bin`: one malformed frame.
//! * `malformed.tsv`: name, root, rule and the expected `Display` of each malformed frame's
//!   violation, with backslash, tab and newline escaped as `\\`, `\t` and `\n`.
//! * `report.txt`: for each valid frame in file-name order, `FRAME <file name>` and then the
//!   frame's exact report.
//! * `coverage.txt`: every union variant and enum value the schema lets a frame carry, with the
//!   first frame that carries it (`sweep-*` frames come from the value generators and are kept
//!   only for what no hand-built frame carries), then every vector member marked `[nonempty]`
//!   with the shortest length the corpus gives it.

use bytes::Bytes;
use flatbuffers::{FlatBufferBuilder, InvalidFlatbuffer, WIPOffset};
use nervix_protocol::frame::{
    BackupDownloadMessageRoot, BackupDownloadRequestRoot, ClientMessageRoot, Frame,
    RestoreMessageRoot, RestoreReplyRoot, ServerMessageRoot, UploadMessageRoot, UploadReplyRoot,
    ROOT_EXTENSIONS,
};
use nervix_protocol::limits::FRAME_LIMIT;
use nervix_protocol::rng::Rng;
use nervix_protocol::schema::*;
use nervix_protocol::testkit::{Gen, Generate};
use nervix_protocol::violation::{Fault, ProtocolViolation, Site};
use nervix_protocol::{Encoder, Root};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// A frame file: its file name and its bytes.
pub type CorpusFile = (String, Bytes);

/// The corpus directory of the workspace.
pub fn corpus_dir() -> PathBuf {
    crate::workspace_root().join("vectors").join("corpus")
}

// ===== Reading any root =====

fn check_report<R: Root>(bytes: Bytes) -> Result<String, ProtocolViolation> {
    Frame::<R>::check(bytes).map(|f| f.report())
}

/// Checks `bytes` with the checked reader of the root whose extension is `ext`, and returns the
/// frame's report or its violation. `None` for an extension that names no root.
pub fn check_as(ext: &str, bytes: Bytes) -> Option<Result<String, ProtocolViolation>> {
    Some(match ext {
        "nxcm" => check_report::<ClientMessageRoot>(bytes),
        "nxsm" => check_report::<ServerMessageRoot>(bytes),
        "nxum" => check_report::<UploadMessageRoot>(bytes),
        "nxur" => check_report::<UploadReplyRoot>(bytes),
        "nxbq" => check_report::<BackupDownloadRequestRoot>(bytes),
        "nxbd" => check_report::<BackupDownloadMessageRoot>(bytes),
        "nxrm" => check_report::<RestoreMessageRoot>(bytes),
        "nxrr" => check_report::<RestoreReplyRoot>(bytes),
        _ => return None,
    })
}

/// The root table name of extension `ext`, if it names a root.
pub fn root_name(ext: &str) -> Option<&'static str> {
    ROOT_EXTENSIONS
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, name)| *name)
}

/// The extension of a frame file name (`x.nxsm` gives `nxsm`).
pub fn extension(file_name: &str) -> &str {
    file_name.rsplit_once('.').map_or("", |(_, ext)| ext)
}

/// The report text of `frames`: in file-name order, `FRAME <file name>` and the frame's report.
/// A frame that does not pass its root's checked reader gives its name and violation instead.
pub fn try_report_text(frames: &[CorpusFile]) -> Result<String, String> {
    let mut sorted: Vec<&CorpusFile> = frames.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::new();
    for (name, bytes) in sorted {
        let report = match check_as(extension(name), bytes.clone()) {
            Some(Ok(report)) => report,
            Some(Err(v)) => return Err(format!("corpus frame {name} is not valid: {v}")),
            None => return Err(format!("corpus frame {name} has no root extension")),
        };
        let _ = writeln!(out, "FRAME {name}");
        out.push_str(&report);
    }
    Ok(out)
}

/// The report text of `frames` (see [`try_report_text`]).
///
/// # Panics
/// If a frame does not pass its root's checked reader.
pub fn report_text(frames: &[CorpusFile]) -> String {
    try_report_text(frames).unwrap_or_else(|e| panic!("{e}"))
}

// ===== Small builders =====

fn text(s: &str) -> String {
    s.to_string()
}

/// A 32-byte fingerprint whose bytes follow from `seed`.
fn fingerprint(seed: u8) -> Box<FingerprintT> {
    Box::new(FingerprintT {
        bytes: (0u8..32)
            .map(|i| seed.wrapping_mul(37).wrapping_add(i.wrapping_mul(11)))
            .collect(),
    })
}

/// `n` bytes whose values follow from `seed`.
fn seeded_bytes(seed: u8, n: usize) -> Vec<u8> {
    (0..n)
        .map(|i| seed.wrapping_add((i as u8).wrapping_mul(29)))
        .collect()
}

fn node(kind: ModelKind, name: &str) -> Box<NodeRefT> {
    Box::new(NodeRefT {
        kind: Some(kind),
        name: text(name),
    })
}

fn handle(name: &str, generation: u64) -> Box<SubscriptionHandleT> {
    Box::new(SubscriptionHandleT {
        name: text(name),
        generation,
    })
}

fn diagnostic(message: &str, span: Option<(u32, u32)>) -> DiagnosticT {
    DiagnosticT {
        message: text(message),
        span: span.map(|(start, end)| SourceSpanT { start, end }),
    }
}

fn endpoints(node: &str, grpc: Option<&str>, web: Option<&str>) -> Box<LeaderEndpointsT> {
    Box::new(LeaderEndpointsT {
        node: text(node),
        grpc_uri: grpc.map(text),
        web_console_uri: web.map(text),
    })
}

fn preview(transaction_id: &str, position: u64, seed: u8) -> Box<TransactionPreviewIdentityT> {
    Box::new(TransactionPreviewIdentityT {
        transaction_id: text(transaction_id),
        position,
        planning_basis: fingerprint(seed),
    })
}

fn transaction_status(state: TransactionStateT, accepted: u64, applied: u64) -> TransactionStatusT {
    TransactionStatusT {
        transaction_id: text("tx-0001"),
        domain: text("tenant"),
        state,
        accepted_operations: accepted,
        applied_operations: applied,
    }
}

fn scalar_type(scalar: ScalarType) -> Box<FieldTypeT> {
    Box::new(FieldTypeT {
        shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT {
            scalar: Some(scalar),
        })),
    })
}

fn fixed_list_type(element: Box<FieldTypeT>, length: u32) -> Box<FieldTypeT> {
    Box::new(FieldTypeT {
        shape: FieldTypeShapeT::FixedListFieldType(Box::new(FixedListFieldTypeT {
            element,
            length,
        })),
    })
}

fn list_type(element: Box<FieldTypeT>) -> Box<FieldTypeT> {
    Box::new(FieldTypeT {
        shape: FieldTypeShapeT::ListFieldType(Box::new(ListFieldTypeT { element })),
    })
}

fn field(name: &str, field_type: Box<FieldTypeT>, nullable: bool, sensitive: bool) -> RowFieldT {
    RowFieldT {
        name: text(name),
        field_type,
        nullable,
        sensitive,
    }
}

fn plain(name: &str, scalar: ScalarType) -> RowFieldT {
    field(name, scalar_type(scalar), false, false)
}

fn cell(value: CellValueT) -> CellT {
    CellT { value }
}

fn null() -> CellT {
    cell(CellValueT::NullCell(Box::default()))
}

fn redacted() -> CellT {
    cell(CellValueT::RedactedCell(Box::default()))
}

fn u8_cell(value: u8) -> CellT {
    cell(CellValueT::U8Cell(Box::new(U8CellT { value })))
}

fn i8_cell(value: i8) -> CellT {
    cell(CellValueT::I8Cell(Box::new(I8CellT { value })))
}

fn u16_cell(value: u16) -> CellT {
    cell(CellValueT::U16Cell(Box::new(U16CellT { value })))
}

fn i16_cell(value: i16) -> CellT {
    cell(CellValueT::I16Cell(Box::new(I16CellT { value })))
}

fn u32_cell(value: u32) -> CellT {
    cell(CellValueT::U32Cell(Box::new(U32CellT { value })))
}

fn i32_cell(value: i32) -> CellT {
    cell(CellValueT::I32Cell(Box::new(I32CellT { value })))
}

fn u64_cell(value: u64) -> CellT {
    cell(CellValueT::U64Cell(Box::new(U64CellT { value })))
}

fn i64_cell(value: i64) -> CellT {
    cell(CellValueT::I64Cell(Box::new(I64CellT { value })))
}

fn f32_cell(bits: u32) -> CellT {
    cell(CellValueT::F32Cell(Box::new(F32CellT {
        value: Some(f32::from_bits(bits)),
    })))
}

fn f64_cell(bits: u64) -> CellT {
    cell(CellValueT::F64Cell(Box::new(F64CellT {
        value: Some(f64::from_bits(bits)),
    })))
}

fn bool_cell(value: bool) -> CellT {
    cell(CellValueT::BoolCell(Box::new(BoolCellT { value })))
}

fn string_cell(value: &str) -> CellT {
    cell(CellValueT::StringCell(Box::new(StringCellT {
        value: text(value),
    })))
}

fn bytes_cell(value: &[u8]) -> CellT {
    cell(CellValueT::BytesCell(Box::new(BytesCellT {
        value: value.to_vec(),
    })))
}

fn datetime_cell(unix_nanos: i64) -> CellT {
    cell(CellValueT::DatetimeCell(Box::new(DatetimeCellT {
        unix_nanos,
    })))
}

fn list_cell(elements: Vec<CellT>) -> CellT {
    cell(CellValueT::ListCell(Box::new(ListCellT { elements })))
}

fn server(body: ServerBodyT) -> ServerMessageT {
    ServerMessageT { body }
}

fn reply(request_id: u64, body: ReplyBodyT) -> ServerMessageT {
    server(ServerBodyT::Reply(Box::new(ReplyT { request_id, body })))
}

fn client(request_id: u64, request: ClientRequestT) -> ClientMessageT {
    ClientMessageT {
        request_id,
        request,
    }
}

fn command_outcome(
    reference: &str,
    origin: OutcomeOrigin,
    disposition: CommandDispositionT,
    message: &str,
) -> CommandOutcomeT {
    CommandOutcomeT {
        execution_reference: text(reference),
        origin: Some(origin),
        disposition,
        message: text(message),
        diagnostics: Vec::new(),
        statements: Vec::new(),
        transaction: None,
        transaction_admission: None,
        inspection: None,
        wasm_state: None,
        resource: None,
        backup: None,
        restore: None,
    }
}

fn command_reply(request_id: u64, outcome: CommandOutcomeT) -> ServerMessageT {
    reply(request_id, ReplyBodyT::CommandOutcome(Box::new(outcome)))
}

// ===== The values the manual's pitfalls name =====

/// 2^53, the first integer an IEEE double cannot tell from its successor.
pub const TWO_POW_53: u64 = 1 << 53;

/// Text with multi-byte characters and an embedded NUL.
pub const NUL_TEXT: &str = "Grüße\0東京 🦀 ok";

/// Bytes that are not UTF-8: a lone 0xff, an overlong NUL, an encoded surrogate, a stray
/// continuation byte and a real NUL.
pub const NON_UTF8: &[u8] = &[0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80, 0x80, 0x00, 0x41];

/// f32 -0.0.
pub const F32_NEG_ZERO: u32 = 0x8000_0000;
/// The smallest positive f32 subnormal.
pub const F32_MIN_SUBNORMAL: u32 = 0x0000_0001;
/// The largest finite f32.
pub const F32_MAX_FINITE: u32 = 0x7f7f_ffff;
/// A quiet f32 NaN with payload 1.
pub const F32_NAN_PAYLOAD: u32 = 0x7fc0_0001;
/// f32 +infinity.
pub const F32_POS_INF: u32 = 0x7f80_0000;
/// f32 -infinity.
pub const F32_NEG_INF: u32 = 0xff80_0000;
/// f64 -0.0.
pub const F64_NEG_ZERO: u64 = 0x8000_0000_0000_0000;
/// The smallest positive f64 subnormal.
pub const F64_MIN_SUBNORMAL: u64 = 0x0000_0000_0000_0001;
/// The largest finite f64.
pub const F64_MAX_FINITE: u64 = 0x7fef_ffff_ffff_ffff;
/// A quiet f64 NaN with payload 1.
pub const F64_NAN_PAYLOAD: u64 = 0x7ff8_0000_0000_0001;
/// f64 +infinity.
pub const F64_POS_INF: u64 = 0x7ff0_0000_0000_0000;
/// f64 -infinity.
pub const F64_NEG_INF: u64 = 0xfff0_0000_0000_0000;

/// An execution reference of exactly 128 characters.
pub fn long_reference() -> String {
    let mut s = text("exec-");
    while s.len() < 128 {
        s.push(char::from(b'a' + (s.len() % 26) as u8));
    }
    s
}

/// The schema of the branched `readings` subscription: every scalar type, a fixed list, a list
/// of fixed lists, a nullable and a sensitive field, and a branch whose key fields include a
/// nullable and a sensitive one.
pub fn readings_schema() -> RowSchemaT {
    RowSchemaT {
        fields: vec![
            plain("small_u", ScalarType::U8),
            plain("small_i", ScalarType::I8),
            plain("half_u", ScalarType::U16),
            plain("half_i", ScalarType::I16),
            plain("word_u", ScalarType::U32),
            plain("word_i", ScalarType::I32),
            plain("wide_u", ScalarType::U64),
            plain("wide_i", ScalarType::I64),
            plain("single", ScalarType::F32),
            plain("double", ScalarType::F64),
            plain("flag", ScalarType::Bool),
            plain("label", ScalarType::String),
            plain("stamp", ScalarType::Datetime),
            plain("blob", ScalarType::Bytes),
            field(
                "triple",
                fixed_list_type(scalar_type(ScalarType::F64), 3),
                false,
                false,
            ),
            field(
                "tracks",
                list_type(fixed_list_type(scalar_type(ScalarType::I32), 2)),
                false,
                false,
            ),
            field("note", scalar_type(ScalarType::String), true, false),
            field("secret", scalar_type(ScalarType::String), false, true),
        ],
        branch: Some(Box::new(RowBranchT {
            branch: text("by_device"),
            fields: vec![
                field("device", scalar_type(ScalarType::String), true, false),
                field("token", scalar_type(ScalarType::Bytes), false, true),
                plain("zone", ScalarType::U16),
            ],
        })),
    }
}

#[allow(clippy::too_many_arguments)]
fn readings_row(
    ints: (u8, i8, u16, i16, u32, i32, u64, i64),
    single: u32,
    double: u64,
    flag: bool,
    label: &str,
    stamp: i64,
    blob: &[u8],
    triple: [u64; 3],
    tracks: &[[i32; 2]],
    note: Option<&str>,
) -> RowT {
    RowT {
        cells: vec![
            u8_cell(ints.0),
            i8_cell(ints.1),
            u16_cell(ints.2),
            i16_cell(ints.3),
            u32_cell(ints.4),
            i32_cell(ints.5),
            u64_cell(ints.6),
            i64_cell(ints.7),
            f32_cell(single),
            f64_cell(double),
            bool_cell(flag),
            string_cell(label),
            datetime_cell(stamp),
            bytes_cell(blob),
            list_cell(triple.iter().map(|b| f64_cell(*b)).collect()),
            list_cell(
                tracks
                    .iter()
                    .map(|pair| list_cell(pair.iter().map(|v| i32_cell(*v)).collect()))
                    .collect(),
            ),
            note.map_or_else(null, string_cell),
            redacted(),
        ],
    }
}

/// The rows of the branched `readings` subscription, in order: minimums, maximums, then values
/// around 2^53 with the remaining float extremes.
pub fn readings_rows() -> Vec<RowT> {
    let t = TWO_POW_53;
    vec![
        readings_row(
            (0, i8::MIN, 0, i16::MIN, 0, i32::MIN, 0, i64::MIN),
            F32_NEG_ZERO,
            F64_NEG_ZERO,
            false,
            "",
            i64::MIN,
            &[],
            [F64_MIN_SUBNORMAL, F64_MAX_FINITE, F64_NEG_INF],
            &[],
            None,
        ),
        readings_row(
            (
                u8::MAX,
                i8::MAX,
                u16::MAX,
                i16::MAX,
                u32::MAX,
                i32::MAX,
                u64::MAX,
                i64::MAX,
            ),
            F32_NAN_PAYLOAD,
            F64_NAN_PAYLOAD,
            true,
            NUL_TEXT,
            i64::MAX,
            NON_UTF8,
            [F64_POS_INF, F64_NAN_PAYLOAD, F64_NEG_ZERO],
            &[[i32::MIN, i32::MAX], [0, -1]],
            Some(""),
        ),
        readings_row(
            (1, -1, 1, -1, 1, -1, t - 1, (t - 1) as i64),
            F32_MIN_SUBNORMAL,
            F64_MIN_SUBNORMAL,
            false,
            "a",
            0,
            &[0x00],
            [0, 0x3ff0_0000_0000_0000, 0xbff0_0000_0000_0000],
            &[[1, 2]],
            Some("north"),
        ),
        readings_row(
            (2, -2, 2, -2, 2, -2, t, -(t as i64)),
            F32_MAX_FINITE,
            F64_MAX_FINITE,
            true,
            "é",
            -1,
            &[0x80],
            [1, 2, 3],
            &[[3, 4], [5, 6], [7, 8]],
            None,
        ),
        readings_row(
            (3, -3, 3, -3, 3, -3, t + 1, -((t + 1) as i64)),
            F32_POS_INF,
            F64_NEG_INF,
            false,
            "\0",
            1,
            &[0xc3, 0x28],
            [F64_POS_INF, F64_NEG_INF, F64_NEG_ZERO],
            &[[-1, -2]],
            Some("\0"),
        ),
        readings_row(
            (4, -4, 4, -4, 4, -4, 1, (t + 1) as i64),
            F32_NEG_INF,
            F64_POS_INF,
            true,
            "🦀",
            1_700_000_000_123_456_789,
            &[0xf8, 0x88, 0x80, 0x80, 0x80],
            [0, 0, 0],
            &[[0, 0]],
            Some("south"),
        ),
    ]
}

/// The schema of the unbranched `summary` subscription.
pub fn summary_schema() -> RowSchemaT {
    RowSchemaT {
        fields: vec![
            plain("count", ScalarType::U64),
            plain("mean", ScalarType::F64),
            field(
                "tags",
                list_type(scalar_type(ScalarType::String)),
                false,
                false,
            ),
            field(
                "window",
                fixed_list_type(scalar_type(ScalarType::Datetime), 2),
                true,
                false,
            ),
        ],
        branch: None,
    }
}

// ===== Valid frames =====

struct Corpus {
    encoder: Encoder,
    files: Vec<CorpusFile>,
}

impl Corpus {
    fn add<R: Root>(&mut self, name: &str, value: R::Owned) {
        let bytes = self
            .encoder
            .encode::<R>(&value)
            .unwrap_or_else(|e| panic!("corpus frame {name} does not encode: {e}"));
        self.files.push((format!("{name}.{}", R::EXTENSION), bytes));
    }

    fn cm(&mut self, name: &str, value: ClientMessageT) {
        self.add::<ClientMessageRoot>(&format!("client-{name}"), value);
    }

    fn sm(&mut self, name: &str, value: ServerMessageT) {
        self.add::<ServerMessageRoot>(&format!("server-{name}"), value);
    }
}

/// Every valid corpus frame, as (file name, bytes), in a fixed order.
///
/// # Panics
/// If a builder produces a value the encoder refuses (a defect of the corpus).
pub fn valid_frames() -> Vec<CorpusFile> {
    static FRAMES: std::sync::OnceLock<Vec<CorpusFile>> = std::sync::OnceLock::new();
    FRAMES.get_or_init(build_valid_frames).clone()
}

fn build_valid_frames() -> Vec<CorpusFile> {
    let mut c = Corpus {
        encoder: Encoder::new(),
        files: Vec::new(),
    };
    client_frames(&mut c);
    server_reply_frames(&mut c);
    server_event_frames(&mut c);
    stream_frames(&mut c);
    boundary_frames(&mut c);
    sweep_frames(&mut c);
    c.files
}

/// The characters an execution reference may use (E-1): ASCII letters, digits, `-`, `_`, `.`.
pub const REFERENCE_CLASSES: &str =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.";

/// A 128-byte execution reference, the longest allowed, using every allowed character.
pub fn reference_of_every_class() -> String {
    REFERENCE_CLASSES.chars().cycle().take(128).collect()
}

/// Every byte value once, in order.
fn every_byte() -> Vec<u8> {
    (0..=255u8).collect()
}

/// Length and value boundaries: execution references of 1 byte and of 128 bytes using every
/// allowed character class on every frame that carries one; the smallest and largest totals of
/// every root that declares one; and chunks of the single bytes 0x00 and 0xff and of every byte
/// value in every chunk root. (Chunks as large as a frame allows are pinned by the limit tests
/// rather than committed here.)
fn boundary_frames(c: &mut Corpus) {
    use ClientRequestT as Q;
    // The largest position twice: expected of the transaction and of the reviewed preview.
    c.cm(
        "commit-preview-position-max",
        client(
            29,
            Q::CommandRequest(Box::new(CommandRequestT {
                query: text("COMMIT;"),
                domain: None,
                execution_reference: text("0192d4e4-7b36-7c3e.9f00_5b2d8c3a1e44"),
                expected_transaction_position: Some(u64::MAX),
                expected_preview: Some(preview("tx-0002", u64::MAX, 4)),
            })),
        ),
    );
    // Multi-byte text where offsets count bytes: the cursor and the edit stand right after the
    // two-byte `ü` (byte 13, character 12), and the edit replaces exactly that character.
    let input = text("USE tenant-ü; SHOW €");
    let at = input.find('ü').unwrap_or(0) + 'ü'.len_utf8();
    c.cm(
        "suggest-multibyte-cursor",
        client(
            31,
            Q::SuggestRequest(Box::new(SuggestRequestT {
                input,
                cursor: at as u32,
                domain: Some(text("tenant-ü")),
                page_size: 100,
                continuation: None,
            })),
        ),
    );
    c.sm(
        "reply-suggest-multibyte-edit",
        reply(
            31,
            ReplyBodyT::SuggestOutcome(Box::new(SuggestOutcomeT {
                status: Some(SuggestionStatus::Ready),
                suggestions: vec![SuggestionT {
                    value: text("tenant-ü"),
                    kind: Some(SuggestionKind::Text),
                    edit: Box::new(TextEditT {
                        start: (at - 'ü'.len_utf8()) as u32,
                        end: at as u32,
                        replacement: text("ü"),
                    }),
                }],
                continuation: None,
            })),
        ),
    );
    // Every vector marked [nonempty] at its shortest, one entry.
    c.cm(
        "open-ingestor-one-field",
        client(
            32,
            Q::OpenIngestorRequest(Box::new(OpenIngestorRequestT {
                domain: text("tenant"),
                ingestor: text("meters_in"),
                expected_fields: vec![plain("meter", ScalarType::String)],
                max_outstanding_batches: 1,
                max_outstanding_bytes: 1,
            })),
        ),
    );
    c.cm(
        "open-emitter-one-field",
        client(
            33,
            Q::OpenEmitterRequest(Box::new(OpenEmitterRequestT {
                domain: text("tenant"),
                emitter: text("alerts_out"),
                expected_fields: vec![plain("alert", ScalarType::String)],
                max_outstanding_batches: 1024,
                max_outstanding_bytes: 33_554_432,
            })),
        ),
    );
    c.cm(
        "submit-batch-one-byte",
        client(
            34,
            Q::SubmitBatchRequest(Box::new(SubmitBatchRequestT {
                producer: 32,
                batch: vec![0xff],
            })),
        ),
    );
    c.sm(
        "reply-producer-opened-one-field",
        reply(
            32,
            ReplyBodyT::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
                disposition: OpenIngestorDispositionT::ProducerOpened(Box::new(ProducerOpenedT {
                    domain: text("tenant"),
                    ingestor: text("meters_in"),
                    fields: vec![plain("meter", ScalarType::String)],
                    generation: u64::MAX,
                    contract: fingerprint(12),
                    attachment: vec![0xff; 16],
                    window: ProducerWindowT::SequentialProducerWindow(Box::default()),
                    ack_timeout_nanos: 1,
                    retry_backoff_nanos: 1,
                    retry_max_backoff_nanos: 1,
                    granted_batches: 1,
                    granted_bytes: 1,
                    max_batch_bytes: 1,
                    max_batch_rows: 1,
                    admission: Some(ProducerAdmission::Suspended),
                })),
                message: text(""),
            })),
        ),
    );
    c.sm(
        "reply-subscription-opened-one-key",
        reply(
            35,
            ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
                disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(
                    SubscriptionOpenedT {
                        subscription: handle("one", 1),
                        domain: text("tenant"),
                        relay: text("by_device"),
                        subscription_type: Some(SubscriptionType::Row),
                        schema: Box::new(RowSchemaT {
                            fields: vec![plain("device", ScalarType::String)],
                            branch: Some(Box::new(RowBranchT {
                                branch: text("device"),
                                fields: vec![plain("device", ScalarType::String)],
                            })),
                        }),
                    },
                )),
                message: text(""),
                diagnostics: Vec::new(),
            })),
        ),
    );
    // Edges the upstream client's own tests check: an empty query, the largest choice page,
    // a U64 field and a nullable sensitive one in an emitter's fields and in a subscription's
    // schema.
    c.cm(
        "command-empty-query",
        client(
            60,
            Q::CommandRequest(Box::new(CommandRequestT {
                query: text(""),
                domain: Some(text("tenant")),
                execution_reference: text("exec-empty-query"),
                expected_transaction_position: None,
                expected_preview: None,
            })),
        ),
    );
    c.cm(
        "choice-lookup-page-size-100",
        client(
            61,
            Q::ChoiceLookupRequest(Box::new(ChoiceLookupRequestT {
                target: Some(ChoiceTarget::RelayField),
                dependencies: vec![ChoiceSelectionT {
                    value: ChoiceValueT::DomainChoiceReference(Box::new(DomainChoiceReferenceT {
                        domain: text("tenant"),
                    })),
                }],
                search: text("dev"),
                page_size: 100,
                page_cursor: None,
            })),
        ),
    );
    c.cm(
        "open-emitter-u64-nullable-sensitive",
        client(
            62,
            Q::OpenEmitterRequest(Box::new(OpenEmitterRequestT {
                domain: text("tenant"),
                emitter: text("alerts_out"),
                expected_fields: vec![
                    plain("sequence", ScalarType::U64),
                    field("contact", scalar_type(ScalarType::String), true, true),
                ],
                max_outstanding_batches: 8,
                max_outstanding_bytes: 1_048_576,
            })),
        ),
    );
    c.sm(
        "reply-subscription-opened-nullable-sensitive",
        reply(
            63,
            ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
                disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(
                    SubscriptionOpenedT {
                        subscription: handle("contacts", 1),
                        domain: text("tenant"),
                        relay: text("people"),
                        subscription_type: Some(SubscriptionType::Row),
                        schema: Box::new(RowSchemaT {
                            fields: vec![
                                plain("id", ScalarType::U64),
                                field("email", scalar_type(ScalarType::String), true, true),
                            ],
                            branch: None,
                        }),
                    },
                )),
                message: text(""),
                diagnostics: Vec::new(),
            })),
        ),
    );
    // A 128-byte domain name.
    c.cm(
        "detach-domain-clock-long-domain",
        client(
            30,
            Q::DetachDomainClockRequest(Box::new(DetachDomainClockRequestT {
                domain: "d".repeat(128),
            })),
        ),
    );
    for (name, reference) in [
        ("one-byte", text("7")),
        ("every-class", reference_of_every_class()),
    ] {
        c.cm(
            &format!("command-reference-{name}"),
            client(
                26,
                Q::CommandRequest(Box::new(CommandRequestT {
                    query: text("SHOW DOMAINS"),
                    domain: None,
                    execution_reference: reference.clone(),
                    expected_transaction_position: None,
                    expected_preview: None,
                })),
            ),
        );
        c.sm(
            &format!("reply-command-reference-{name}"),
            command_reply(
                26,
                command_outcome(
                    &reference,
                    OutcomeOrigin::Executed,
                    CommandDispositionT::CommandCompleted(Box::default()),
                    "",
                ),
            ),
        );
        c.add::<BackupDownloadRequestRoot>(
            &format!("backup-request-reference-{name}"),
            BackupDownloadRequestT {
                execution_reference: reference.clone(),
            },
        );
        c.add::<RestoreMessageRoot>(
            &format!("restore-start-reference-{name}"),
            RestoreMessageT {
                part: RestorePartT::RestoreStart(Box::new(RestoreStartT {
                    request_id: 2,
                    execution_reference: reference,
                    statement: text("RESTORE DOMAIN tenant"),
                    total_bytes: u64::MAX,
                    digest: fingerprint(42),
                })),
            },
        );
    }

    for total in [1, u64::MAX] {
        c.add::<UploadMessageRoot>(
            &format!("upload-start-total-{total}"),
            UploadMessageT {
                part: UploadPartT::UploadStart(Box::new(UploadStartT {
                    request_id: 1,
                    domain: text("tenant"),
                    resource: text("r"),
                    upload_identity: text("u"),
                    total_bytes: total,
                })),
            },
        );
    }
    c.add::<BackupDownloadMessageRoot>(
        "backup-download-start-total-1",
        BackupDownloadMessageT {
            part: BackupDownloadPartT::BackupArchiveStart(Box::new(BackupArchiveStartT {
                total_bytes: 1,
                digest: fingerprint(32),
            })),
        },
    );
    // Transfer totals: the smallest, the largest a client joins, and the largest a frame can
    // carry (the assembler refuses it as a first total, the frame itself is valid).
    for (total, offset) in [
        (1, 0),
        (TRANSFER_LIMIT_U64, TRANSFER_LIMIT_U64 - 1),
        (u64::MAX, u64::MAX - 1),
    ] {
        c.sm(
            &format!("reply-transfer-part-total-{total}"),
            reply(
                27,
                ReplyBodyT::TransferPart(Box::new(TransferPartT {
                    total_bytes: total,
                    offset,
                    chunk: vec![0xff],
                })),
            ),
        );
    }

    for (name, bytes) in [
        ("00", vec![0x00]),
        ("ff", vec![0xff]),
        ("every-byte", every_byte()),
    ] {
        c.add::<UploadMessageRoot>(
            &format!("upload-chunk-{name}"),
            UploadMessageT {
                part: UploadPartT::UploadChunk(Box::new(UploadChunkT {
                    bytes: bytes.clone(),
                })),
            },
        );
        c.add::<BackupDownloadMessageRoot>(
            &format!("backup-download-chunk-{name}"),
            BackupDownloadMessageT {
                part: BackupDownloadPartT::BackupArchiveChunk(Box::new(BackupArchiveChunkT {
                    bytes: bytes.clone(),
                })),
            },
        );
        c.add::<RestoreMessageRoot>(
            &format!("restore-chunk-{name}"),
            RestoreMessageT {
                part: RestorePartT::RestoreChunk(Box::new(RestoreChunkT {
                    bytes: bytes.clone(),
                })),
            },
        );
        c.sm(
            &format!("reply-transfer-part-chunk-{name}"),
            reply(
                28,
                ReplyBodyT::TransferPart(Box::new(TransferPartT {
                    total_bytes: 4096,
                    offset: 0,
                    chunk: bytes,
                })),
            ),
        );
    }
}

const TRANSFER_LIMIT_U64: u64 = nervix_protocol::limits::TRANSFER_LIMIT as u64;

/// How many generator seeds the sweep tries per root before giving up.
const SWEEP_SEEDS: u64 = 4000;

/// Generated frames that carry the union variants and enum values no hand-built frame carries.
///
/// For each seed in turn, every root gets one frame from the value generators (the same ones
/// the property tests use); a frame is kept only when it carries a variant or value the corpus
/// does not carry yet. The sweep stops once everything the schema declares is carried.
fn sweep_frames(c: &mut Corpus) {
    let schema = crate::coverage::schema();
    let declared = crate::coverage::declared(&schema);
    let mut carried: BTreeSet<crate::coverage::Value> = c
        .files
        .iter()
        .flat_map(|(n, b)| crate::coverage::carried_by_frame(&schema, n, b))
        .collect();
    for seed in 0..SWEEP_SEEDS {
        if declared.is_subset(&carried) {
            return;
        }
        let mut sweep = Sweep {
            c: &mut *c,
            schema: &schema,
            carried: &mut carried,
            seed,
        };
        sweep.root::<ClientMessageRoot>();
        sweep.root::<ServerMessageRoot>();
        sweep.root::<UploadMessageRoot>();
        sweep.root::<UploadReplyRoot>();
        sweep.root::<BackupDownloadRequestRoot>();
        sweep.root::<BackupDownloadMessageRoot>();
        sweep.root::<RestoreMessageRoot>();
        sweep.root::<RestoreReplyRoot>();
        // Replies and requests sit one or two unions below their roots, where a uniform pick
        // rarely reaches the members of one variant: they get seeds of their own.
        let body: ReplyBodyT = sweep.generate(b"reply");
        sweep.keep::<ServerMessageRoot>(
            "reply",
            ServerMessageT {
                body: ServerBodyT::Reply(Box::new(ReplyT {
                    request_id: seed + 1,
                    body,
                })),
            },
        );
        let request: ClientRequestT = sweep.generate(b"request");
        sweep.keep::<ClientMessageRoot>(
            "request",
            ClientMessageT {
                request_id: seed + 1,
                request,
            },
        );
    }
}

struct Sweep<'a> {
    c: &'a mut Corpus,
    schema: &'a crate::coverage::Schema,
    carried: &'a mut BTreeSet<crate::coverage::Value>,
    seed: u64,
}

impl Sweep<'_> {
    /// A value from the generators, from this seed and `salt`.
    fn generate<T: Generate>(&self, salt: &[u8]) -> T {
        let salt = salt
            .iter()
            .fold(0u64, |h, b| h.rotate_left(8) ^ u64::from(*b));
        let mut data = vec![0u8; 4096];
        Rng::new(self.seed ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15)).fill(&mut data);
        Gen::new(&data).value()
    }

    fn root<R: Root>(&mut self)
    where
        R::Owned: Generate,
    {
        let value: R::Owned = self.generate(&R::IDENTIFIER);
        self.keep::<R>("root", value);
    }

    /// Keeps `value` as a corpus frame if it encodes and carries something new.
    fn keep<R: Root>(&mut self, kind: &str, value: R::Owned) {
        let Ok(bytes) = self.c.encoder.encode::<R>(&value) else {
            return;
        };
        let name = format!("sweep-{kind}-{:04}.{}", self.seed, R::EXTENSION);
        let new: Vec<_> = crate::coverage::carried_by_frame(self.schema, &name, &bytes)
            .into_iter()
            .filter(|v| !self.carried.contains(v))
            .collect();
        if !new.is_empty() {
            self.carried.extend(new);
            self.c.files.push((name, bytes));
        }
    }
}

fn client_frames(c: &mut Corpus) {
    use ClientRequestT as Q;
    c.cm(
        "command-no-position",
        client(
            1,
            Q::CommandRequest(Box::new(CommandRequestT {
                query: text("SHOW DOMAINS"),
                domain: None,
                execution_reference: text("exec-0001"),
                expected_transaction_position: None,
                expected_preview: None,
            })),
        ),
    );
    c.cm(
        "command-position-zero",
        client(
            2,
            Q::CommandRequest(Box::new(CommandRequestT {
                query: text("BEGIN; CREATE RELAY readings;"),
                domain: Some(text("tenant")),
                execution_reference: text("exec-0002"),
                expected_transaction_position: Some(0),
                expected_preview: None,
            })),
        ),
    );
    c.cm(
        "command-long-reference-preview",
        client(
            u64::MAX,
            Q::CommandRequest(Box::new(CommandRequestT {
                query: text("COMMIT -- Grüße 東京 🦀"),
                domain: Some(text("")),
                execution_reference: long_reference(),
                expected_transaction_position: Some(u64::MAX),
                expected_preview: Some(preview("tx-0001", TWO_POW_53 + 1, 3)),
            })),
        ),
    );
    c.cm(
        "suggest-first-page",
        client(
            3,
            Q::SuggestRequest(Box::new(SuggestRequestT {
                input: text("CREATE RE"),
                cursor: 9,
                domain: Some(text("tenant")),
                page_size: 1,
                continuation: None,
            })),
        ),
    );
    c.cm(
        "suggest-empty-input",
        client(
            4,
            Q::SuggestRequest(Box::new(SuggestRequestT {
                input: text(""),
                cursor: 0,
                domain: None,
                page_size: 100,
                continuation: Some(text("")),
            })),
        ),
    );
    c.cm(
        "list-domains",
        client(5, Q::ListDomainsRequest(Box::default())),
    );
    c.cm(
        "select-domain",
        client(
            6,
            Q::SelectDomainRequest(Box::new(SelectDomainRequestT {
                domain: text("tenant"),
            })),
        ),
    );
    c.cm(
        "attach-transaction",
        client(
            7,
            Q::AttachTransactionRequest(Box::new(AttachTransactionRequestT {
                transaction_id: text("tx-0001"),
            })),
        ),
    );
    c.cm(
        "inspect-attached-all",
        client(
            8,
            Q::InspectTransactionRequest(Box::new(InspectTransactionRequestT {
                target: InspectionTargetT::AttachedTransaction(Box::default()),
                operation: None,
            })),
        ),
    );
    c.cm(
        "inspect-by-id-operation",
        client(
            9,
            Q::InspectTransactionRequest(Box::new(InspectTransactionRequestT {
                target: InspectionTargetT::TransactionById(Box::new(TransactionByIdT {
                    transaction_id: text("tx-0002"),
                })),
                operation: Some(u64::MAX),
            })),
        ),
    );
    c.cm(
        "subscribe",
        client(
            10,
            Q::SubscribeRequest(Box::new(SubscribeRequestT {
                domain: text("tenant"),
                statement: text("CREATE SUBSCRIPTION watch ON readings"),
                subscription_type: Some(SubscriptionType::Row),
            })),
        ),
    );
    c.cm(
        "unsubscribe",
        client(
            11,
            Q::UnsubscribeRequest(Box::new(UnsubscribeRequestT {
                subscription: text("watch"),
            })),
        ),
    );
    c.cm(
        "cancel-max",
        client(
            12,
            Q::CancelRequest(Box::new(CancelRequestT {
                target_request_id: u64::MAX,
            })),
        ),
    );
    c.cm(
        "choice-lookup-dependencies",
        client(
            13,
            Q::ChoiceLookupRequest(Box::new(ChoiceLookupRequestT {
                target: Some(ChoiceTarget::RelayField),
                dependencies: vec![
                    ChoiceSelectionT {
                        value: ChoiceValueT::DomainChoiceReference(Box::new(
                            DomainChoiceReferenceT {
                                domain: text("tenant"),
                            },
                        )),
                    },
                    ChoiceSelectionT {
                        value: ChoiceValueT::ModelChoiceReference(Box::new(
                            ModelChoiceReferenceT {
                                node: node(ModelKind::Relay, "readings"),
                            },
                        )),
                    },
                ],
                search: text("wid"),
                page_size: 25,
                page_cursor: Some(text("cursor-1")),
            })),
        ),
    );
    c.cm(
        "choice-lookup-no-dependencies",
        client(
            14,
            Q::ChoiceLookupRequest(Box::new(ChoiceLookupRequestT {
                target: Some(ChoiceTarget::DomainPace),
                dependencies: Vec::new(),
                search: text(""),
                page_size: 1,
                page_cursor: None,
            })),
        ),
    );
    c.cm(
        "attach-domain-clock",
        client(
            15,
            Q::AttachDomainClockRequest(Box::new(AttachDomainClockRequestT {
                domain: text("tenant"),
            })),
        ),
    );
    c.cm(
        "detach-domain-clock",
        client(
            16,
            Q::DetachDomainClockRequest(Box::new(DetachDomainClockRequestT {
                domain: text("tenant"),
            })),
        ),
    );
    c.cm(
        "open-ingestor",
        client(
            17,
            Q::OpenIngestorRequest(Box::new(OpenIngestorRequestT {
                domain: text("tenant"),
                ingestor: text("meters_in"),
                expected_fields: vec![
                    plain("meter", ScalarType::String),
                    plain("kwh", ScalarType::F64),
                    field("raw", scalar_type(ScalarType::Bytes), true, true),
                ],
                max_outstanding_batches: 1024,
                max_outstanding_bytes: 33_554_432,
            })),
        ),
    );
    c.cm(
        "submit-batch",
        client(
            18,
            Q::SubmitBatchRequest(Box::new(SubmitBatchRequestT {
                producer: 17,
                batch: seeded_bytes(0xa5, 48),
            })),
        ),
    );
    c.cm(
        "close-ingestor",
        client(
            19,
            Q::CloseIngestorRequest(Box::new(CloseIngestorRequestT { producer: 17 })),
        ),
    );
    c.cm(
        "open-emitter",
        client(
            20,
            Q::OpenEmitterRequest(Box::new(OpenEmitterRequestT {
                domain: text("tenant"),
                emitter: text("alerts_out"),
                expected_fields: vec![
                    plain("alert", ScalarType::String),
                    field("secret", scalar_type(ScalarType::String), false, true),
                ],
                max_outstanding_batches: 1,
                max_outstanding_bytes: 1,
            })),
        ),
    );
    c.cm(
        "read-emitter-batch",
        client(
            21,
            Q::ReadEmitterBatchRequest(Box::new(ReadEmitterBatchRequestT { consumer: 20 })),
        ),
    );
    c.cm(
        "settle-emitter-batch-reject",
        client(
            22,
            Q::SettleEmitterBatchRequest(Box::new(SettleEmitterBatchRequestT {
                consumer: 20,
                reference: seeded_bytes(0x10, 16),
                decision: Some(EmitterBatchDecision::Reject),
                reason: text("schema drift"),
            })),
        ),
    );
    c.cm(
        "settle-emitter-batch-ack",
        client(
            23,
            Q::SettleEmitterBatchRequest(Box::new(SettleEmitterBatchRequestT {
                consumer: 0,
                reference: vec![0; 16],
                decision: Some(EmitterBatchDecision::Ack),
                reason: text(""),
            })),
        ),
    );
    c.cm(
        "close-emitter",
        client(
            24,
            Q::CloseEmitterRequest(Box::new(CloseEmitterRequestT { consumer: 20 })),
        ),
    );
}

fn backup_cut(
    kind: BackupCutKind,
    engaged_at: Option<i64>,
    released_at: Option<i64>,
    counters: [u64; 4],
) -> Box<BackupCutT> {
    Box::new(BackupCutT {
        kind: Some(kind),
        engaged_at,
        released_at,
        buffered_records: counters[0],
        buffered_bytes: counters[1],
        dropped_records: counters[2],
        rejected_records: counters[3],
    })
}

/// A backup summary. A domain backup (`users` absent) carries a quiesced cut with the extreme
/// times and counters either side of 2^53, and a live cut without times; a cluster backup
/// carries a stopped and a configuration-only cut without times and a quiesced cut whose
/// times are present zeros.
fn backup_summary(users: Option<u64>) -> Box<BackupArchiveSummaryT> {
    let domains = if users.is_none() {
        vec![
            BackupDomainSummaryT {
                domain: text("tenant"),
                revision: TWO_POW_53,
                cut: backup_cut(
                    BackupCutKind::Quiesced,
                    Some(i64::MIN),
                    Some(i64::MAX),
                    [u64::MAX, TWO_POW_53 + 1, TWO_POW_53 - 1, 1],
                ),
                sections: 3,
                section_bytes: TWO_POW_53 + 1,
            },
            BackupDomainSummaryT {
                domain: text("tenant-ü"),
                revision: 0,
                cut: backup_cut(BackupCutKind::Live, None, None, [0; 4]),
                sections: 0,
                section_bytes: 0,
            },
        ]
    } else {
        vec![
            BackupDomainSummaryT {
                domain: text("archive"),
                revision: u64::MAX,
                cut: backup_cut(BackupCutKind::Stopped, None, None, [0; 4]),
                sections: 0,
                section_bytes: u64::MAX,
            },
            BackupDomainSummaryT {
                domain: text("config"),
                revision: 1,
                cut: backup_cut(BackupCutKind::ConfigurationOnly, None, None, [0; 4]),
                sections: 0,
                section_bytes: 0,
            },
            BackupDomainSummaryT {
                domain: text("tenant"),
                revision: 2,
                cut: backup_cut(BackupCutKind::Quiesced, Some(0), Some(0), [0; 4]),
                sections: 2,
                section_bytes: 4096,
            },
        ]
    };
    // The domain backup is just below 2^53 and keeps resource bytes; the cluster backup is as
    // large as a total can be and leaves them out.
    let (total_bytes, resources) = if users.is_none() {
        (TWO_POW_53 - 1, BackupResources::Included)
    } else {
        (u64::MAX, BackupResources::Omitted)
    };
    Box::new(BackupArchiveSummaryT {
        total_bytes,
        digest: fingerprint(7),
        captured_at: i64::MIN,
        retained_until: i64::MAX,
        resources: Some(resources),
        users,
        domains,
    })
}

fn coverage(kind: ModelKind, name: &str, branches: NodeBranchCoverageT) -> Box<NodeCoverageT> {
    Box::new(NodeCoverageT {
        node: node(kind, name),
        branches,
    })
}

/// A gate boundary of every branch coverage.
fn gate_boundaries() -> Vec<AttributedGateBoundaryT> {
    let branches = [
        BranchCoverageT::AllBranchCoverage(Box::default()),
        BranchCoverageT::UnbranchedCoverage(Box::default()),
        BranchCoverageT::DeclaredBranchCoverage(Box::new(DeclaredBranchCoverageT {
            branch: text("by_device"),
        })),
        BranchCoverageT::SelectedBranchCoverage(Box::new(SelectedBranchCoverageT {
            branch: text("by_site"),
            keys: vec![*fingerprint(3)],
        })),
    ];
    branches
        .into_iter()
        .enumerate()
        .map(|(i, branches)| AttributedGateBoundaryT {
            boundary: Box::new(GateBoundaryT {
                relay: format!("gate_{i}"),
                branches,
            }),
            operations: vec![1],
        })
        .collect()
}

fn effects() -> Box<ImpactEffectsT> {
    let relay = || {
        coverage(
            ModelKind::Relay,
            "readings",
            NodeBranchCoverageT::AllBranchCoverage(Box::default()),
        )
    };
    Box::new(ImpactEffectsT {
        changed_configuration: vec![ConfigurationImpactT {
            transition: ConfigurationTransitionT::ConfigurationCreated(Box::new(
                ConfigurationCreatedT {
                    node: node(ModelKind::Relay, "readings"),
                },
            )),
            operations: vec![1],
        }],
        topology: Box::new(AffectedTopologyT {
            before: Box::default(),
            after: Box::new(ImpactTopologyT {
                nodes: vec![AttributedNodeT {
                    coverage: relay(),
                    operations: vec![1],
                }],
                edges: vec![TopologyEdgeT {
                    source: coverage(
                        ModelKind::Ingestor,
                        "meters_in",
                        NodeBranchCoverageT::UnbranchedCoverage(Box::default()),
                    ),
                    target: coverage(
                        ModelKind::Relay,
                        "readings",
                        NodeBranchCoverageT::SelectedBranchCoverage(Box::new(
                            SelectedBranchCoverageT {
                                branch: text("by_device"),
                                keys: vec![*fingerprint(1), *fingerprint(2)],
                            },
                        )),
                    ),
                    kind: Some(ImpactEdgeKind::Dataflow),
                    operations: vec![1, 2],
                }],
            }),
        }),
        ownership_moves: Vec::new(),
        lifecycle: vec![DomainLifecycleImpactT {
            domain: text("tenant"),
            action: Some(DomainLifecycleAction::Start),
            operations: vec![2],
        }],
        activations: vec![ActivationImpactT {
            node: relay(),
            action: Some(ActivationAction::Activate),
            operations: vec![1],
        }],
        rebuilds: Vec::new(),
        state_resets: vec![StateResetImpactT {
            node: coverage(
                ModelKind::Deduplicator,
                "dedup",
                NodeBranchCoverageT::DeclaredBranchCoverage(Box::new(DeclaredBranchCoverageT {
                    branch: text("by_device"),
                })),
            ),
            state: Some(StatePurge::DeduplicatorKeyspace),
            operations: vec![2],
        }],
        force_flushes: Vec::new(),
        resource_catalog: Vec::new(),
        resource_bindings: vec![ResourceBindingImpactT {
            node: node(ModelKind::WasmProcessor, "scorer"),
            resource: text("model_weights"),
            requested: RequestedResourceVersionT::LatestResourceVersion(Box::default()),
            version: 4,
            operations: vec![2],
        }],
    })
}

fn impact_report() -> Box<TransactionImpactReportT> {
    Box::new(TransactionImpactReportT {
        domain: text("tenant"),
        position: 2,
        planning_basis: fingerprint(9),
        completeness: ImpactCompletenessT::ImpactIncomplete(Box::new(ImpactIncompleteT {
            diagnostics: vec![
                ImpactDiagnosticT {
                    kind: Some(ImpactDiagnosticKind::Planning),
                    operation: None,
                    message: text("ownership not yet known"),
                },
                ImpactDiagnosticT {
                    kind: Some(ImpactDiagnosticKind::Ownership),
                    operation: Some(2),
                    message: text("node unreachable"),
                },
            ],
        })),
        operations: vec![
            OperationReportT {
                number: 1,
                operation: TransactionOperationT::CreateConfigurationOperation(Box::new(
                    CreateConfigurationOperationT {
                        domain: text("tenant"),
                        node: node(ModelKind::Relay, "readings"),
                    },
                )),
                execution_step: OperationRangeT { first: 1, last: 2 },
                completeness: ImpactCompletenessT::ImpactComplete(Box::default()),
                // One reason per declared aspect, so the corpus carries every one of them.
                reasons: ModelChangeAspect::ENUM_VALUES
                    .iter()
                    .map(|aspect| OperationReasonT {
                        reason: OperationImpactReasonT::ConfigurationReason(Box::new(
                            ConfigurationReasonT {
                                node: node(ModelKind::Relay, "readings"),
                                aspect: Some(*aspect),
                            },
                        )),
                    })
                    .collect(),
                contribution: effects(),
            },
            OperationReportT {
                number: 2,
                operation: TransactionOperationT::RebindResourceOperation(Box::new(
                    RebindResourceOperationT {
                        domain: text("tenant"),
                        resource: text("model_weights"),
                        requested: RequestedResourceVersionT::ResourceVersionNumber(Box::new(
                            ResourceVersionNumberT { version: 4 },
                        )),
                        version: 4,
                    },
                )),
                execution_step: OperationRangeT { first: 1, last: 2 },
                completeness: ImpactCompletenessT::ImpactComplete(Box::default()),
                reasons: vec![OperationReasonT {
                    reason: OperationImpactReasonT::DomainStartReason(Box::default()),
                }],
                contribution: Box::default(),
            },
        ],
        execution_steps: vec![ExecutionStepReportT {
            operations: OperationRangeT { first: 1, last: 2 },
            planned: Box::new(PlannedStepImpactT {
                completeness: ImpactCompletenessT::ImpactComplete(Box::default()),
                pause: PauseRequirementT::DomainPause(Box::new(DomainPauseT {
                    domain: text("tenant"),
                })),
                effects: effects(),
            }),
            actual: Box::new(ActualStepImpactT {
                outcome: ExecutionStepOutcomeT::StepUnattempted(Box::default()),
                quiescence: vec![ActualQuiescenceT {
                    requirement: PauseRequirementT::SubgraphPause(Box::new(SubgraphPauseT {
                        scope: Box::new(QuiesceSubgraphT {
                            domain: text("tenant"),
                            nodes: Vec::new(),
                            gate_boundaries: gate_boundaries(),
                        }),
                    })),
                    outcomes: vec![QuiescenceOutcomeEntryT {
                        outcome: QuiescenceOutcomeT::QuiescenceRequested(Box::default()),
                    }],
                }],
                effects: Box::default(),
            }),
        }],
    })
}

fn paced_clock(generation: u64) -> Box<DomainClockObservationT> {
    Box::new(DomainClockObservationT {
        generation,
        state: DomainClockObservedStateT::PacedDomainClock(Box::new(PacedDomainClockT {
            period_nanos: 1,
            skew_nanos: u64::MAX,
            logical_origin_unix_nanos: i64::MIN,
            utc_anchor_unix_nanos: i64::MAX,
            time_rate: Some(f64::MIN_POSITIVE),
        })),
    })
}

fn server_reply_frames(c: &mut Corpus) {
    use ReplyBodyT as B;

    let mut completed = command_outcome(
        "exec-backup-1",
        OutcomeOrigin::Executed,
        CommandDispositionT::CommandCompleted(Box::new(CommandCompletedT {
            already_existed: false,
        })),
        "backup captured",
    );
    completed.backup = Some(backup_summary(None));
    c.sm(
        "reply-command-completed-domain-backup",
        command_reply(1, completed),
    );

    let mut completed = command_outcome(
        "exec-backup-2",
        OutcomeOrigin::Recovered,
        CommandDispositionT::CommandCompleted(Box::new(CommandCompletedT {
            already_existed: true,
        })),
        "",
    );
    completed.backup = Some(backup_summary(Some(0)));
    c.sm(
        "reply-command-completed-cluster-backup",
        command_reply(2, completed),
    );

    let mut failed = command_outcome(
        "exec-0003",
        OutcomeOrigin::Executed,
        CommandDispositionT::RequestFailed(Box::default()),
        "statement 2 failed",
    );
    failed.diagnostics = vec![
        diagnostic("unknown relay `reading`", Some((7, 14))),
        diagnostic("span at the very end", Some((u32::MAX, u32::MAX))),
        diagnostic("no position", None),
    ];
    failed.statements = vec![
        StatementOutcomeT {
            disposition: StatementDispositionT::CommandCompleted(Box::default()),
            message: text("ok"),
            diagnostics: Vec::new(),
        },
        StatementOutcomeT {
            disposition: StatementDispositionT::RequestFailed(Box::default()),
            message: text("failed"),
            diagnostics: vec![diagnostic("", Some((0, 0)))],
        },
        StatementOutcomeT {
            disposition: StatementDispositionT::LeaderRedirect(Box::default()),
            message: text("not attempted"),
            diagnostics: Vec::new(),
        },
    ];
    c.sm("reply-command-failed-diagnostics", command_reply(3, failed));

    c.sm(
        "reply-command-leader-redirect-endpoints",
        command_reply(
            4,
            command_outcome(
                "exec-0004",
                OutcomeOrigin::Executed,
                CommandDispositionT::LeaderRedirect(Box::new(LeaderRedirectT {
                    leader: Some(endpoints(
                        "node-b",
                        Some("https://node-b.example:7443"),
                        Some("https://console.example"),
                    )),
                })),
                "not the leader",
            ),
        ),
    );
    c.sm(
        "reply-command-leader-redirect-no-endpoints",
        command_reply(
            5,
            command_outcome(
                "exec-0005",
                OutcomeOrigin::Executed,
                CommandDispositionT::LeaderRedirect(Box::new(LeaderRedirectT {
                    leader: Some(endpoints("node-c", None, None)),
                })),
                "",
            ),
        ),
    );
    c.sm(
        "reply-command-leader-redirect-unknown-leader",
        command_reply(
            6,
            command_outcome(
                "exec-0006",
                OutcomeOrigin::Executed,
                CommandDispositionT::LeaderRedirect(Box::default()),
                "election in progress",
            ),
        ),
    );
    c.sm(
        "reply-command-outcome-unknown",
        command_reply(
            7,
            command_outcome(
                "exec-0007",
                OutcomeOrigin::Recovered,
                CommandDispositionT::OutcomeUnknown(Box::new(OutcomeUnknownT {
                    cause: Some(UnknownOutcomeCause::LeadershipLost),
                })),
                "repeat under the same reference",
            ),
        ),
    );

    let mut admitted = command_outcome(
        "exec-0008",
        OutcomeOrigin::Executed,
        CommandDispositionT::CommandCompleted(Box::default()),
        "operation accepted",
    );
    admitted.transaction = Some(Box::new(transaction_status(
        TransactionStateT::TransactionOpen(Box::default()),
        1,
        0,
    )));
    admitted.transaction_admission = Some(Box::new(TransactionOperationAdmissionT {
        operation: 1,
        preview: preview("tx-0001", 1, 4),
    }));
    admitted.wasm_state = Some(text("{\"counter\":9007199254740993}"));
    c.sm(
        "reply-command-transaction-admission",
        command_reply(8, admitted),
    );

    let mut inspected = command_outcome(
        "exec-0009",
        OutcomeOrigin::Executed,
        CommandDispositionT::CommandCompleted(Box::default()),
        "",
    );
    inspected.inspection = Some(Box::new(TransactionInspectedT {
        transaction: Box::new(transaction_status(
            TransactionStateT::TransactionFailed(Box::new(TransactionFailedT {
                failing_operation: 2,
                error: text("step 1 failed"),
            })),
            2,
            1,
        )),
        operation: None,
        report: impact_report(),
    }));
    inspected.resource = Some(Box::new(ResourceDescriptionT {
        resource: text("model_weights"),
        latest_version: None,
        versions: vec![ResourceVersionDescriptionT {
            version: 1,
            root_checksum: text("r1"),
            manifest_checksum: text("m1"),
            file_count: 2,
            total_bytes: 0,
            created_at: -1,
            created_by_node: text("node-a"),
            entries: ResourceVersionEntriesT::ResourceEntriesListed(Box::new(
                ResourceEntriesListedT {
                    entries: vec![
                        ResourceEntryT {
                            path: text("weights"),
                            content: ResourceEntryContentT::ResourceDirectory(Box::default()),
                        },
                        ResourceEntryT {
                            path: text("weights/a.bin"),
                            content: ResourceEntryContentT::ResourceFile(Box::new(ResourceFileT {
                                size: 0,
                                checksum: text("e3b0"),
                            })),
                        },
                    ],
                },
            )),
        }],
        usages: vec![ResourceUsageT {
            node: node(ModelKind::WasmProcessor, "scorer"),
            version: 1,
        }],
    }));
    c.sm("reply-command-inspection", command_reply(9, inspected));

    c.sm(
        "reply-command-preview-stale",
        command_reply(
            10,
            command_outcome(
                "exec-0010",
                OutcomeOrigin::Executed,
                CommandDispositionT::PreviewStale(Box::new(PreviewStaleT {
                    expected: preview("tx-0001", 1, 5),
                    current: preview("tx-0001", 2, 6),
                })),
                "preview is out of date",
            ),
        ),
    );
    c.sm(
        "reply-command-reference-conflict",
        command_reply(
            11,
            command_outcome(
                "exec-0011",
                OutcomeOrigin::Recovered,
                CommandDispositionT::ExecutionReferenceConflict(Box::new(
                    ExecutionReferenceConflictT {
                        conflict: Some(ExecutionReferenceConflictKind::Content),
                    },
                )),
                "",
            ),
        ),
    );

    c.sm(
        "reply-attach-outcome",
        reply(
            12,
            B::AttachOutcome(Box::new(AttachOutcomeT {
                disposition: AttachDispositionT::TransactionAttached(Box::new(
                    TransactionAttachedT {
                        transaction: Box::new(transaction_status(
                            TransactionStateT::TransactionCommitting(Box::default()),
                            u64::MAX,
                            u64::MAX,
                        )),
                    },
                )),
                message: text(""),
                diagnostics: Vec::new(),
            })),
        ),
    );
    c.sm(
        "reply-suggest-outcome",
        reply(
            13,
            B::SuggestOutcome(Box::new(SuggestOutcomeT {
                status: Some(SuggestionStatus::Ready),
                suggestions: vec![
                    SuggestionT {
                        value: text("RELAY"),
                        kind: Some(SuggestionKind::Text),
                        edit: Box::new(TextEditT {
                            start: 7,
                            end: 9,
                            replacement: text("RELAY"),
                        }),
                    },
                    SuggestionT {
                        value: text("./models/"),
                        kind: Some(SuggestionKind::LocalDirectoryLookup),
                        edit: Box::new(TextEditT {
                            start: u32::MAX,
                            end: 0,
                            replacement: text(""),
                        }),
                    },
                ],
                continuation: Some(text("page-2")),
            })),
        ),
    );
    c.sm(
        "reply-suggest-outcome-empty",
        reply(
            14,
            B::SuggestOutcome(Box::new(SuggestOutcomeT {
                status: Some(SuggestionStatus::MissingContext),
                suggestions: Vec::new(),
                continuation: None,
            })),
        ),
    );
    c.sm(
        "reply-domain-list",
        reply(
            15,
            B::DomainList(Box::new(DomainListT {
                domains: vec![
                    DomainInfoT {
                        domain: text("tenant"),
                        status: Some(DomainStatus::Running),
                        pace: DomainPaceT::PacedDomain(Box::new(PacedDomainT {
                            period_nanos: u64::MAX,
                            skew_nanos: 0,
                        })),
                    },
                    DomainInfoT {
                        domain: text("archive"),
                        status: Some(DomainStatus::Stopped),
                        pace: DomainPaceT::UnpacedDomain(Box::default()),
                    },
                ],
            })),
        ),
    );
    c.sm(
        "reply-domain-selection-not-found",
        reply(
            16,
            B::DomainSelectionOutcome(Box::new(DomainSelectionOutcomeT {
                selection: DomainSelectionT::DomainNotFound(Box::new(DomainNotFoundT {
                    domain: text("nowhere"),
                })),
            })),
        ),
    );
    c.sm(
        "reply-inspection-rejected",
        reply(
            17,
            B::InspectionOutcome(Box::new(InspectionOutcomeT {
                disposition: InspectionDispositionT::InspectionRejected(Box::new(
                    InspectionRejectedT {
                        rejection: Some(InspectionRejection::NoAttachedTransaction),
                        message: text("no transaction is held"),
                    },
                )),
            })),
        ),
    );
    c.sm(
        "reply-subscription-opened-readings",
        reply(
            18,
            B::SubscribeOutcome(Box::new(SubscribeOutcomeT {
                disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(
                    SubscriptionOpenedT {
                        subscription: handle("watch", 1),
                        domain: text("tenant"),
                        relay: text("readings"),
                        subscription_type: Some(SubscriptionType::Row),
                        schema: Box::new(readings_schema()),
                    },
                )),
                message: text(""),
                diagnostics: Vec::new(),
            })),
        ),
    );
    c.sm(
        "reply-subscription-opened-summary",
        reply(
            19,
            B::SubscribeOutcome(Box::new(SubscribeOutcomeT {
                disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(
                    SubscriptionOpenedT {
                        subscription: handle("totals", u64::MAX),
                        domain: text("tenant"),
                        relay: text("summary"),
                        subscription_type: Some(SubscriptionType::Row),
                        schema: Box::new(summary_schema()),
                    },
                )),
                message: text(""),
                diagnostics: Vec::new(),
            })),
        ),
    );
    c.sm(
        "reply-unsubscribe-deleted",
        reply(
            20,
            B::UnsubscribeOutcome(Box::new(UnsubscribeOutcomeT {
                disposition: UnsubscribeDispositionT::SubscriptionDeleted(Box::new(
                    SubscriptionDeletedT {
                        subscription: handle("watch", 1),
                    },
                )),
                message: text("deleted"),
                diagnostics: Vec::new(),
            })),
        ),
    );
    c.sm(
        "reply-cancel-outcome",
        reply(
            21,
            B::CancelOutcome(Box::new(CancelOutcomeT {
                target_request_id: u64::MAX,
                state: Some(CancelState::NotInFlight),
            })),
        ),
    );
    c.sm(
        "reply-request-cancelled",
        reply(
            22,
            B::RequestCancelled(Box::new(RequestCancelledT {
                stage: Some(CancellationStage::BeforeAdmission),
            })),
        ),
    );
    c.sm(
        "reply-request-rejected-field",
        reply(
            23,
            B::RequestRejected(Box::new(RequestRejectedT {
                rejection: Some(RequestRejection::InvalidRequest),
                field: Some(text("SuggestRequest.page_size")),
                message: text("page_size must be 1..=100"),
            })),
        ),
    );
    c.sm(
        "reply-request-rejected-busy",
        reply(
            24,
            B::RequestRejected(Box::new(RequestRejectedT {
                rejection: Some(RequestRejection::ServerBusy),
                field: None,
                message: text(""),
            })),
        ),
    );
    c.sm(
        "reply-transfer-part",
        reply(
            25,
            B::TransferPart(Box::new(TransferPartT {
                total_bytes: 64 * 1024 * 1024,
                offset: 0,
                chunk: seeded_bytes(0x3c, 40),
            })),
        ),
    );

    let choice = |value: ChoiceValueT, label: &str, detail: Option<&str>| ChoiceT {
        value,
        presentation: Box::new(ChoicePresentationT {
            label: text(label),
            detail: detail.map(text),
            group: if detail.is_some() {
                Some(text("group"))
            } else {
                None
            },
        }),
    };
    c.sm(
        "reply-choice-outcome-every-value",
        reply(
            26,
            B::ChoiceOutcome(Box::new(ChoiceOutcomeT {
                status: Some(ChoiceStatus::Ready),
                choices: vec![
                    choice(
                        ChoiceValueT::DomainPaceVariant(Box::new(DomainPaceVariantT {
                            value: Some(DomainPaceChoice::Unpaced),
                        })),
                        "unpaced",
                        None,
                    ),
                    choice(
                        ChoiceValueT::DomainPaceVariant(Box::new(DomainPaceVariantT {
                            value: None,
                        })),
                        "pace not given",
                        None,
                    ),
                    choice(
                        ChoiceValueT::PlacementPolicyVariant(Box::new(PlacementPolicyVariantT {
                            value: Some(PlacementPolicyChoice::SuggestSeparation),
                        })),
                        "separate",
                        Some("spread over nodes"),
                    ),
                    choice(
                        ChoiceValueT::DomainChoiceReference(Box::new(DomainChoiceReferenceT {
                            domain: text("tenant"),
                        })),
                        "tenant",
                        None,
                    ),
                    choice(
                        ChoiceValueT::ResourceChoiceReference(Box::new(ResourceChoiceReferenceT {
                            resource: text("model_weights"),
                        })),
                        "model_weights",
                        Some(""),
                    ),
                    choice(
                        ChoiceValueT::ModelChoiceReference(Box::new(ModelChoiceReferenceT {
                            node: node(ModelKind::Udf, "score"),
                        })),
                        "score",
                        None,
                    ),
                    choice(
                        ChoiceValueT::FieldChoiceReference(Box::new(FieldChoiceReferenceT {
                            field: text("wide_u"),
                        })),
                        "wide_u",
                        None,
                    ),
                    choice(
                        ChoiceValueT::ResourceVersionNumber(Box::new(ResourceVersionNumberT {
                            version: u64::MAX,
                        })),
                        "latest numbered",
                        None,
                    ),
                    choice(
                        ChoiceValueT::LatestResourceVersion(Box::default()),
                        "LATEST",
                        None,
                    ),
                ],
                page_cursor: Some(text("next")),
            })),
        ),
    );
    c.sm(
        "reply-choice-outcome-stale",
        reply(
            27,
            B::ChoiceOutcome(Box::new(ChoiceOutcomeT {
                status: Some(ChoiceStatus::StaleContext),
                choices: Vec::new(),
                page_cursor: None,
            })),
        ),
    );
    c.sm(
        "reply-domain-clock-attached-paced",
        reply(
            28,
            B::DomainClockAttachOutcome(Box::new(DomainClockAttachOutcomeT {
                disposition: DomainClockAttachDispositionT::DomainClockAttached(Box::new(
                    DomainClockAttachedT {
                        domain: text("tenant"),
                        clock: paced_clock(u64::MAX),
                    },
                )),
                message: text(""),
            })),
        ),
    );
    c.sm(
        "reply-domain-clock-already-attached",
        reply(
            29,
            B::DomainClockAttachOutcome(Box::new(DomainClockAttachOutcomeT {
                disposition: DomainClockAttachDispositionT::DomainClockAlreadyAttached(Box::new(
                    DomainClockAlreadyAttachedT {
                        domain: text("tenant"),
                    },
                )),
                message: text("already following"),
            })),
        ),
    );
    c.sm(
        "reply-domain-clock-attach-not-found",
        reply(
            30,
            B::DomainClockAttachOutcome(Box::new(DomainClockAttachOutcomeT {
                disposition: DomainClockAttachDispositionT::DomainNotFound(Box::new(
                    DomainNotFoundT {
                        domain: text("nowhere"),
                    },
                )),
                message: text("no such domain"),
            })),
        ),
    );
    c.sm(
        "reply-domain-clock-detached",
        reply(
            31,
            B::DomainClockDetachOutcome(Box::new(DomainClockDetachOutcomeT {
                disposition: DomainClockDetachDispositionT::DomainClockDetached(Box::new(
                    DomainClockDetachedT {
                        domain: text("tenant"),
                    },
                )),
                message: text(""),
            })),
        ),
    );
    c.sm(
        "reply-domain-clock-not-attached",
        reply(
            32,
            B::DomainClockDetachOutcome(Box::new(DomainClockDetachOutcomeT {
                disposition: DomainClockDetachDispositionT::DomainClockNotAttached(Box::new(
                    DomainClockNotAttachedT {
                        domain: text("tenant"),
                    },
                )),
                message: text("was not following"),
            })),
        ),
    );
    c.sm(
        "reply-producer-opened",
        reply(
            33,
            B::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
                disposition: OpenIngestorDispositionT::ProducerOpened(Box::new(ProducerOpenedT {
                    domain: text("tenant"),
                    ingestor: text("meters_in"),
                    fields: vec![
                        plain("meter", ScalarType::String),
                        plain("kwh", ScalarType::F64),
                        field("raw", scalar_type(ScalarType::Bytes), true, true),
                    ],
                    generation: 0,
                    contract: fingerprint(11),
                    attachment: seeded_bytes(0x77, 16),
                    window: ProducerWindowT::ParallelProducerWindow(Box::new(
                        ParallelProducerWindowT { max: u64::MAX },
                    )),
                    ack_timeout_nanos: 30_000_000_000,
                    retry_backoff_nanos: 1,
                    retry_max_backoff_nanos: u64::MAX,
                    granted_batches: 1024,
                    granted_bytes: 33_554_432,
                    max_batch_bytes: 33_554_432,
                    max_batch_rows: u32::MAX,
                    admission: Some(ProducerAdmission::Open),
                })),
                message: text(""),
            })),
        ),
    );
    c.sm(
        "reply-producer-refused",
        reply(
            34,
            B::OpenIngestorOutcome(Box::new(OpenIngestorOutcomeT {
                disposition: OpenIngestorDispositionT::ProducerRefused(Box::new(
                    ProducerRefusedT {
                        refusal: Some(ProducerRefusal::SchemaMismatch),
                    },
                )),
                message: text("field 2 differs"),
            })),
        ),
    );
    let submission = |id: u64, disposition: SubmissionDispositionT, message: &str| {
        reply(
            id,
            B::SubmissionOutcome(Box::new(SubmissionOutcomeT {
                disposition,
                message: text(message),
            })),
        )
    };
    c.sm(
        "reply-submission-completed",
        submission(
            35,
            SubmissionDispositionT::SubmissionCompleted(Box::default()),
            "",
        ),
    );
    c.sm(
        "reply-submission-not-admitted",
        submission(
            36,
            SubmissionDispositionT::SubmissionNotAdmitted(Box::new(SubmissionNotAdmittedT {
                refusal: Some(SubmissionRefusal::MalformedBatch),
            })),
            "not Arrow IPC",
        ),
    );
    c.sm(
        "reply-submission-failed",
        submission(
            37,
            SubmissionDispositionT::SubmissionFailed(Box::new(SubmissionFailedT {
                failure: Some(ProcessingFailure::Rejected),
            })),
            "rejected downstream",
        ),
    );
    c.sm(
        "reply-submission-outcome-unknown",
        submission(
            38,
            SubmissionDispositionT::SubmissionOutcomeUnknown(Box::new(SubmissionOutcomeUnknownT {
                cause: Some(OutcomeUncertainty::OwnerLost),
            })),
            "owner lost",
        ),
    );
    c.sm(
        "reply-close-ingestor-not-open",
        reply(
            39,
            B::CloseIngestorOutcome(Box::new(CloseIngestorOutcomeT {
                disposition: CloseIngestorDispositionT::ProducerNotOpen(Box::default()),
                message: text(""),
            })),
        ),
    );
    c.sm(
        "reply-emitter-opened",
        reply(
            40,
            B::OpenEmitterOutcome(Box::new(OpenEmitterOutcomeT {
                disposition: OpenEmitterDispositionT::EmitterOpened(Box::new(EmitterOpenedT {
                    domain: text("tenant"),
                    emitter: text("alerts_out"),
                    fields: vec![
                        plain("alert", ScalarType::String),
                        field("secret", scalar_type(ScalarType::String), false, true),
                    ],
                    generation: 3,
                    contract: fingerprint(12),
                    window: ConsumerWindowT::SequentialConsumerWindow(Box::default()),
                    ack_timeout_nanos: 0,
                    retry_backoff_nanos: 0,
                    retry_max_backoff_nanos: 0,
                    granted_batches: 1,
                    granted_bytes: 1,
                    max_batch_bytes: 1,
                    max_batch_rows: 1,
                })),
                message: text(""),
            })),
        ),
    );
    c.sm(
        "reply-emitter-refused",
        reply(
            41,
            B::OpenEmitterOutcome(Box::new(OpenEmitterOutcomeT {
                disposition: OpenEmitterDispositionT::EmitterRefused(Box::new(EmitterRefusedT {
                    refusal: Some(EmitterOpenRefusal::DomainNotFound),
                })),
                message: text("no such domain"),
            })),
        ),
    );
    c.sm(
        "reply-emitter-batch-received",
        reply(
            42,
            B::ReadEmitterBatchOutcome(Box::new(ReadEmitterBatchOutcomeT {
                disposition: ReadEmitterDispositionT::EmitterBatchReceived(Box::new(
                    EmitterBatchReceivedT {
                        identity: seeded_bytes(0x01, 16),
                        reference: seeded_bytes(0x02, 16),
                        source_relay: text("alerts"),
                        branch_fingerprint: Some(fingerprint(13).bytes),
                        batch: seeded_bytes(0x03, 24),
                        members: u32::MAX,
                        execution_now_unix_nanos: i64::MIN,
                    },
                )),
                message: text(""),
            })),
        ),
    );
    c.sm(
        "reply-emitter-consumer-ended",
        reply(
            43,
            B::ReadEmitterBatchOutcome(Box::new(ReadEmitterBatchOutcomeT {
                disposition: ReadEmitterDispositionT::EmitterConsumerEnded(Box::default()),
                message: text("consumer ended"),
            })),
        ),
    );
    c.sm(
        "reply-emitter-settled",
        reply(
            44,
            B::SettleEmitterBatchOutcome(Box::new(SettleEmitterBatchOutcomeT {
                disposition: Some(EmitterSettlement::Confirmed),
                message: text(""),
            })),
        ),
    );
    c.sm(
        "reply-emitter-settle-no-disposition",
        reply(
            45,
            B::SettleEmitterBatchOutcome(Box::new(SettleEmitterBatchOutcomeT {
                disposition: None,
                message: text("disposition absent"),
            })),
        ),
    );
    c.sm(
        "reply-emitter-closed",
        reply(
            46,
            B::CloseEmitterOutcome(Box::new(CloseEmitterOutcomeT {
                disposition: Some(EmitterCloseDisposition::NotOpen),
                message: text(""),
            })),
        ),
    );
}

fn server_event_frames(c: &mut Corpus) {
    use ServerBodyT as S;
    c.sm(
        "notice",
        server(S::ServerNotice(Box::new(ServerNoticeT {
            level: Some(NoticeLevel::Warning),
            message: text(NUL_TEXT),
        }))),
    );
    c.sm(
        "leadership-remote",
        server(S::LeadershipObserved(Box::new(LeadershipObservedT {
            leadership: LeadershipT::LeaderIsRemote(Box::new(LeaderIsRemoteT {
                leader: endpoints("node-b", Some("https://node-b.example:7443"), None),
            })),
        }))),
    );
    c.sm(
        "leadership-unknown",
        server(S::LeadershipObserved(Box::new(LeadershipObservedT {
            leadership: LeadershipT::LeaderUnknown(Box::default()),
        }))),
    );
    c.sm(
        "domains-observed",
        server(S::DomainsObserved(Box::new(DomainsObservedT {
            domains: vec![DomainInfoT {
                domain: text("tenant"),
                status: Some(DomainStatus::Paused),
                pace: DomainPaceT::UnpacedDomain(Box::default()),
            }],
        }))),
    );
    c.sm(
        "domain-snapshot",
        server(S::DomainSnapshotObserved(Box::new(
            DomainSnapshotObservedT {
                domain: text("tenant"),
                graph_json: text("{\"nodes\":[],\"edges\":[]}"),
                entities: vec![
                    DomainEntityEntryT {
                        entity: DomainEntityT::ModelEntity(Box::new(ModelEntityT {
                            node: node(ModelKind::Relay, "readings"),
                        })),
                    },
                    DomainEntityEntryT {
                        entity: DomainEntityT::ResourceEntity(Box::new(ResourceEntityT {
                            name: text("model_weights"),
                            latest_version: None,
                        })),
                    },
                    DomainEntityEntryT {
                        entity: DomainEntityT::ResourceEntity(Box::new(ResourceEntityT {
                            name: text("lookup_table"),
                            latest_version: Some(u64::MAX),
                        })),
                    },
                ],
            },
        ))),
    );
    c.sm(
        "cluster-observed",
        server(S::ClusterObserved(Box::new(ClusterObservedT {
            running_domains: TWO_POW_53 - 1,
            graph_nodes: TWO_POW_53,
            relays: TWO_POW_53 + 1,
        }))),
    );
    c.sm(
        "subscription-rows-readings",
        server(S::SubscriptionRows(Box::new(SubscriptionRowsT {
            subscription: handle("watch", 1),
            batch: Box::new(RowBatchT {
                branch_key: Some(Box::new(BranchKeyT {
                    cells: vec![null(), redacted(), u16_cell(u16::MAX)],
                })),
                rows: readings_rows(),
            }),
        }))),
    );
    c.sm(
        "subscription-rows-readings-device",
        server(S::SubscriptionRows(Box::new(SubscriptionRowsT {
            subscription: handle("watch", 1),
            batch: Box::new(RowBatchT {
                branch_key: Some(Box::new(BranchKeyT {
                    cells: vec![string_cell("pump-7"), redacted(), u16_cell(0)],
                })),
                rows: readings_rows().into_iter().skip(1).take(1).collect(),
            }),
        }))),
    );
    c.sm(
        "subscription-rows-summary",
        server(S::SubscriptionRows(Box::new(SubscriptionRowsT {
            subscription: handle("totals", u64::MAX),
            batch: Box::new(RowBatchT {
                branch_key: None,
                rows: vec![
                    RowT {
                        cells: vec![
                            u64_cell(0),
                            f64_cell(F64_NEG_ZERO),
                            list_cell(Vec::new()),
                            null(),
                        ],
                    },
                    RowT {
                        cells: vec![
                            u64_cell(u64::MAX),
                            f64_cell(F64_NAN_PAYLOAD),
                            list_cell(vec![string_cell(""), string_cell(NUL_TEXT)]),
                            list_cell(vec![datetime_cell(i64::MIN), datetime_cell(i64::MAX)]),
                        ],
                    },
                ],
            }),
        }))),
    );
    c.sm(
        "subscription-delivery-lost",
        server(S::SubscriptionDeliveryLost(Box::new(
            SubscriptionDeliveryLostT {
                subscription: handle("watch", 1),
                dropped_rows: u64::MAX,
            },
        ))),
    );
    c.sm(
        "subscription-rows-skipped",
        server(S::SubscriptionRowsSkipped(Box::new(
            SubscriptionRowsSkippedT {
                subscription: handle("watch", 1),
                cause: Some(RowsSkippedCause::FilterFailed),
                skipped_rows: 1,
                message: text("division by zero"),
            },
        ))),
    );
    c.sm(
        "subscription-ended",
        server(S::SubscriptionEnded(Box::new(SubscriptionEndedT {
            subscription: handle("watch", 1),
            reason: Some(SubscriptionEndReason::RelayChanged),
            message: text("subscribe again"),
        }))),
    );
    c.sm(
        "session-ending-shutdown",
        server(S::SessionEnding(Box::new(SessionEndingT {
            reason: SessionEndReasonT::ServerShuttingDown(Box::default()),
        }))),
    );
    c.sm(
        "session-ending-redirect",
        server(S::SessionEnding(Box::new(SessionEndingT {
            reason: SessionEndReasonT::LeaderRedirect(Box::new(LeaderRedirectT {
                leader: Some(endpoints("node-c", None, Some("https://console.example"))),
            })),
        }))),
    );
    c.sm(
        "session-ending-violation",
        server(S::SessionEnding(Box::new(SessionEndingT {
            reason: SessionEndReasonT::ProtocolViolated(Box::new(ProtocolViolatedT {
                message: text("request_id 0"),
            })),
        }))),
    );
    c.sm(
        "domain-clock-observed-stopped",
        server(S::DomainClockObserved(Box::new(DomainClockObservedT {
            domain: text("tenant"),
            clock: Box::new(DomainClockObservationT {
                generation: 0,
                state: DomainClockObservedStateT::StoppedDomainClock(Box::default()),
            }),
        }))),
    );
    c.sm(
        "domain-clock-observed-paced",
        server(S::DomainClockObserved(Box::new(DomainClockObservedT {
            domain: text("tenant"),
            clock: paced_clock(1),
        }))),
    );
    c.sm(
        "domain-clock-attachment-ended",
        server(S::DomainClockAttachmentEnded(Box::new(
            DomainClockAttachmentEndedT {
                domain: text("tenant"),
                reason: Some(DomainClockAttachmentEndReason::DomainRemoved),
            },
        ))),
    );
    c.sm(
        "domain-clock-ticked",
        server(S::DomainClockTicked(Box::new(DomainClockTickedT {
            domain: text("tenant"),
            generation: u64::MAX,
            tick_id: 1,
            logical_boundary_unix_nanos: i64::MIN,
            authority_utc_unix_nanos: i64::MAX,
            serving_logical_unix_nanos: 0,
        }))),
    );
    c.sm(
        "producer-admission-changed",
        server(S::ProducerAdmissionChanged(Box::new(
            ProducerAdmissionChangedT {
                producer: 17,
                admission: Some(ProducerAdmission::Suspended),
            },
        ))),
    );
    c.sm(
        "producer-ended",
        server(S::ProducerEnded(Box::new(ProducerEndedT {
            producer: u64::MAX,
            reason: Some(ProducerEndReason::EndpointChanged),
            message: text(""),
        }))),
    );
}

fn restore_report() -> Box<RestoreReportT> {
    Box::new(RestoreReportT {
        mode: Some(RestoreMode::DryRun),
        total_bytes: u64::MAX,
        digest: fingerprint(21),
        captured_at: i64::MIN,
        users: Some(Box::new(RestoredUsersT {
            created: 0,
            skipped: TWO_POW_53,
            replaced: u64::MAX,
        })),
        domains: vec![RestoredDomainT {
            source: text("tenant"),
            domain: text("tenant-restored"),
            resource_versions: 1,
            models: 2,
            planned_models: Some(impact_report()),
        }],
        steps: vec![
            RestoreStepReportT {
                kind: Some(RestoreStepKind::Users),
                domain: None,
                outcome: Some(RestoreStepOutcome::Planned),
            },
            RestoreStepReportT {
                kind: Some(RestoreStepKind::CreateDomain),
                domain: Some(text("tenant-restored")),
                outcome: Some(RestoreStepOutcome::Planned),
            },
        ],
    })
}

fn stream_frames(c: &mut Corpus) {
    c.add::<UploadMessageRoot>(
        "upload-start",
        UploadMessageT {
            part: UploadPartT::UploadStart(Box::new(UploadStartT {
                request_id: u64::MAX,
                domain: text("tenant"),
                resource: text("model_weights"),
                upload_identity: text("upload-ü-1"),
                total_bytes: TWO_POW_53 + 1,
            })),
        },
    );
    c.add::<UploadMessageRoot>(
        "upload-chunk",
        UploadMessageT {
            part: UploadPartT::UploadChunk(Box::new(UploadChunkT {
                bytes: NON_UTF8.to_vec(),
            })),
        },
    );
    c.add::<UploadReplyRoot>(
        "upload-reply-installed",
        UploadReplyT {
            request_id: Some(u64::MAX),
            disposition: UploadDispositionT::ResourceInstalled(Box::new(ResourceInstalledT {
                upload_identity: text("upload-ü-1"),
                version: 1,
                origin: Some(OutcomeOrigin::Executed),
            })),
            message: text(""),
            diagnostics: Vec::new(),
        },
    );
    c.add::<UploadReplyRoot>(
        "upload-reply-failed-no-request",
        UploadReplyT {
            request_id: None,
            disposition: UploadDispositionT::UploadFailed(Box::new(UploadFailedT {
                upload_identity: None,
                failure: Some(UploadFailure::InvalidStream),
                assigned_version: None,
            })),
            message: text("no UploadStart first"),
            diagnostics: vec![diagnostic("stream began with a chunk", None)],
        },
    );
    c.add::<UploadReplyRoot>(
        "upload-reply-failed-request-zero",
        UploadReplyT {
            request_id: Some(0),
            disposition: UploadDispositionT::UploadFailed(Box::new(UploadFailedT {
                upload_identity: Some(text("")),
                failure: Some(UploadFailure::SizeMismatch),
                assigned_version: Some(u64::MAX),
            })),
            message: text("size mismatch"),
            diagnostics: Vec::new(),
        },
    );
    c.add::<UploadReplyRoot>(
        "upload-reply-leader-redirect",
        UploadReplyT {
            request_id: Some(1),
            disposition: UploadDispositionT::LeaderRedirect(Box::new(LeaderRedirectT {
                leader: Some(endpoints(
                    "node-b",
                    Some("https://node-b.example:7443"),
                    None,
                )),
            })),
            message: text("not the leader"),
            diagnostics: Vec::new(),
        },
    );
    c.add::<BackupDownloadRequestRoot>(
        "backup-request",
        BackupDownloadRequestT {
            execution_reference: long_reference(),
        },
    );
    c.add::<BackupDownloadRequestRoot>(
        "backup-request-empty-reference",
        BackupDownloadRequestT {
            execution_reference: text(""),
        },
    );
    let download = |part: BackupDownloadPartT| BackupDownloadMessageT { part };
    c.add::<BackupDownloadMessageRoot>(
        "backup-download-start",
        download(BackupDownloadPartT::BackupArchiveStart(Box::new(
            BackupArchiveStartT {
                total_bytes: u64::MAX,
                digest: fingerprint(31),
            },
        ))),
    );
    c.add::<BackupDownloadMessageRoot>(
        "backup-download-chunk",
        download(BackupDownloadPartT::BackupArchiveChunk(Box::new(
            BackupArchiveChunkT { bytes: vec![0x00] },
        ))),
    );
    c.add::<BackupDownloadMessageRoot>(
        "backup-download-complete",
        download(BackupDownloadPartT::BackupArchiveComplete(Box::default())),
    );
    c.add::<BackupDownloadMessageRoot>(
        "backup-download-failed",
        download(BackupDownloadPartT::BackupDownloadFailed(Box::new(
            BackupDownloadFailedT {
                failure: Some(BackupDownloadFailure::InvalidRequest),
                message: text("empty reference"),
            },
        ))),
    );
    c.add::<BackupDownloadMessageRoot>(
        "backup-download-leader-redirect",
        download(BackupDownloadPartT::LeaderRedirect(Box::default())),
    );
    c.add::<BackupDownloadMessageRoot>(
        "backup-download-leader-redirect-leader",
        download(BackupDownloadPartT::LeaderRedirect(Box::new(
            LeaderRedirectT {
                leader: Some(endpoints(
                    "node-c",
                    Some("https://node-c.example:7443"),
                    Some("https://node-c.example:8443"),
                )),
            },
        ))),
    );
    c.add::<RestoreMessageRoot>(
        "restore-start",
        RestoreMessageT {
            part: RestorePartT::RestoreStart(Box::new(RestoreStartT {
                request_id: 1,
                execution_reference: text("exec-restore-1"),
                statement: text("RESTORE DOMAIN tenant AS tenant_restored DRY RUN"),
                total_bytes: 1,
                digest: fingerprint(41),
            })),
        },
    );
    c.add::<RestoreMessageRoot>(
        "restore-chunk",
        RestoreMessageT {
            part: RestorePartT::RestoreChunk(Box::new(RestoreChunkT {
                bytes: seeded_bytes(0xee, 33),
            })),
        },
    );
    let mut restored = command_outcome(
        "exec-restore-1",
        OutcomeOrigin::Executed,
        CommandDispositionT::CommandCompleted(Box::default()),
        "dry run planned",
    );
    restored.restore = Some(restore_report());
    c.add::<RestoreReplyRoot>(
        "restore-reply-dry-run",
        RestoreReplyT {
            request_id: Some(1),
            disposition: RestoreDispositionT::CommandOutcome(Box::new(restored)),
        },
    );
    c.add::<RestoreReplyRoot>(
        "restore-reply-failed-no-request",
        RestoreReplyT {
            request_id: None,
            disposition: RestoreDispositionT::RestoreUploadFailed(Box::new(RestoreUploadFailedT {
                failure: Some(RestoreUploadFailure::InvalidStream),
                message: text("no RestoreStart first"),
            })),
        },
    );
    c.add::<RestoreReplyRoot>(
        "restore-reply-failed-request-zero",
        RestoreReplyT {
            request_id: Some(0),
            disposition: RestoreDispositionT::RestoreUploadFailed(Box::new(RestoreUploadFailedT {
                failure: Some(RestoreUploadFailure::DigestMismatch),
                message: text("digest mismatch"),
            })),
        },
    );
}

// ===== Malformed frames =====

/// What the FlatBuffers verifier reports for a frame that does not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// An offset or length reaches outside the buffer.
    RangeOutOfBounds,
    /// A table's signed offset to its vtable reaches outside the buffer.
    SignedOffsetOutOfBounds,
    /// A string is not UTF-8.
    Utf8,
    /// A required member is missing.
    MissingRequiredField(&'static str),
}

impl Verification {
    fn matches(self, error: &InvalidFlatbuffer) -> bool {
        match (self, error) {
            (Self::RangeOutOfBounds, InvalidFlatbuffer::RangeOutOfBounds { .. })
            | (Self::SignedOffsetOutOfBounds, InvalidFlatbuffer::SignedOffsetOutOfBounds { .. })
            | (Self::Utf8, InvalidFlatbuffer::Utf8Error { .. }) => true,
            (
                Self::MissingRequiredField(name),
                InvalidFlatbuffer::MissingRequiredField { required, .. },
            ) => required == name,
            _ => false,
        }
    }
}

/// The violation a malformed frame must produce.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// [`ProtocolViolation::FrameTooShort`] with this length.
    TooShort {
        /// The frame's length.
        len: usize,
    },
    /// [`ProtocolViolation::FrameTooLarge`] with this length, under the 4 MiB limit.
    TooLarge {
        /// The frame's length.
        len: usize,
    },
    /// [`ProtocolViolation::WrongIdentifier`] with these four bytes found.
    WrongIdentifier {
        /// The identifier found.
        found: [u8; 4],
    },
    /// [`ProtocolViolation::Malformed`] with this verifier error.
    Unverifiable(Verification),
    /// [`ProtocolViolation::Field`] at this site with this fault.
    Field {
        /// The member at fault.
        site: Site,
        /// What is wrong with it.
        fault: Fault,
    },
}

impl Expected {
    /// The manual's rule the violation breaks.
    pub fn rule(&self) -> &'static str {
        match self {
            Self::Unverifiable(Verification::MissingRequiredField(_)) | Self::Field { .. } => "F-4",
            _ => "F-3",
        }
    }

    /// Whether `violation`, reported by the reader of root `root`, is exactly this one.
    pub fn matches(&self, root: &str, violation: &ProtocolViolation) -> bool {
        match (self, violation) {
            (Self::TooShort { len }, ProtocolViolation::FrameTooShort { root: r, len: l }) => {
                *r == root && l == len
            }
            (
                Self::TooLarge { len },
                ProtocolViolation::FrameTooLarge {
                    root: r,
                    len: l,
                    limit,
                },
            ) => *r == root && l == len && *limit == FRAME_LIMIT,
            (
                Self::WrongIdentifier { found },
                ProtocolViolation::WrongIdentifier {
                    root: r,
                    expected,
                    found: f,
                },
            ) => *r == root && f == found && expected != found,
            (Self::Unverifiable(v), ProtocolViolation::Malformed { root: r, error }) => {
                *r == root && v.matches(error)
            }
            (Self::Field { site, fault }, ProtocolViolation::Field { site: s, fault: f }) => {
                s == site && f == fault
            }
            _ => false,
        }
    }
}

/// A malformed frame of the corpus.
#[derive(Debug, Clone)]
pub struct MalformedFrame {
    /// The name; the file is `malformed/<name>.bin`.
    pub name: &'static str,
    /// The extension of the root whose reader must refuse it.
    pub ext: &'static str,
    /// The bytes.
    pub bytes: Bytes,
    /// The violation the reader must report.
    pub expected: Expected,
}

impl MalformedFrame {
    /// The root table name of the reader that must refuse it.
    pub fn root(&self) -> &'static str {
        root_name(self.ext).unwrap_or("?")
    }

    /// The file name under `malformed/`.
    pub fn file_name(&self) -> String {
        format!("{}.bin", self.name)
    }
}

/// Packs an owned value without the encoder's checks.
fn pack_unchecked<R: Root>(value: &R::Owned) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    R::finish(value, &mut fbb);
    fbb.finished_data().to_vec()
}

fn encode<R: Root>(value: &R::Owned) -> Vec<u8> {
    Encoder::new()
        .encode::<R>(value)
        .unwrap_or_else(|e| panic!("a base frame does not encode: {e}"))
        .to_vec()
}

fn read_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

fn read_u16(buf: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([buf[at], buf[at + 1]])
}

/// Where the root table starts in a finished buffer.
fn root_table(buf: &[u8]) -> usize {
    read_u32(buf, 0) as usize
}

/// Where member `voffset` of the table at `table` is stored (the table must hold it).
fn member_position(buf: &[u8], table: usize, voffset: u16) -> usize {
    let soffset = read_u32(buf, table) as i32;
    let vtable = (table as i64 - i64::from(soffset)) as usize;
    let vtable_len = read_u16(buf, vtable);
    assert!(voffset < vtable_len, "member {voffset} is past the vtable");
    let field = read_u16(buf, vtable + voffset as usize);
    assert!(field != 0, "member {voffset} is absent");
    table + field as usize
}

/// Replaces the single occurrence of `marker` in `buf` with `with` (same length).
fn replace_once(buf: &mut [u8], marker: &[u8], with: &[u8]) {
    assert_eq!(marker.len(), with.len());
    let hits: Vec<usize> = buf
        .windows(marker.len())
        .enumerate()
        .filter(|(_, w)| *w == marker)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(hits.len(), 1, "marker must occur exactly once");
    buf[hits[0]..hits[0] + with.len()].copy_from_slice(with);
}

/// A small valid server frame used as the base of several malformed ones.
fn base_notice() -> Vec<u8> {
    encode::<ServerMessageRoot>(&server(ServerBodyT::ServerNotice(Box::new(
        ServerNoticeT {
            level: Some(NoticeLevel::Info),
            message: text("maintenance window at 02:00"),
        },
    ))))
}

/// A valid server reply with a few nested tables, used as the base of truncations.
fn base_reply() -> Vec<u8> {
    encode::<ServerMessageRoot>(&reply(
        23,
        ReplyBodyT::RequestRejected(Box::new(RequestRejectedT {
            rejection: Some(RequestRejection::UnsupportedValue),
            field: Some(text("ChoiceLookupRequest.target")),
            message: text("target not supported by this server"),
        })),
    ))
}

/// A ServerMessage whose `body_type` is `tag` while its `body` holds a ServerNotice, built
/// member by member so that even a NONE (0) discriminant is written.
fn server_message_with_tag(tag: u8) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    let message = fbb.create_string("tagged body");
    let notice = ServerNotice::create(
        &mut fbb,
        &ServerNoticeArgs {
            level: Some(NoticeLevel::Error),
            message: Some(message),
        },
    );
    let start = fbb.start_table();
    fbb.push_slot_always::<WIPOffset<_>>(ServerMessage::VT_BODY, notice);
    fbb.push_slot_always::<u8>(ServerMessage::VT_BODY_TYPE, tag);
    let root = fbb.end_table(start);
    fbb.finish(root, Some("NXSM"));
    fbb.finished_data().to_vec()
}

/// A ServerMessage table with no members at all: its required union is missing.
fn empty_server_message() -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    let start = fbb.start_table();
    let root = fbb.end_table(start);
    fbb.finish(root, Some("NXSM"));
    fbb.finished_data().to_vec()
}

/// A Reply carrying RequestRejected whose `rejection` is `raw`, through the generated table
/// builders, which write any value of the enum's underlying type.
fn rejected_with_raw_reason(raw: u8) -> Vec<u8> {
    let mut fbb = FlatBufferBuilder::new();
    let message = fbb.create_string("rejected for a reason this schema does not know");
    let rejected = RequestRejected::create(
        &mut fbb,
        &RequestRejectedArgs {
            rejection: Some(RequestRejection(raw)),
            field: None,
            message: Some(message),
        },
    );
    let body = Reply::create(
        &mut fbb,
        &ReplyArgs {
            request_id: 31,
            body_type: ReplyBody::RequestRejected,
            body: Some(rejected.as_union_value()),
        },
    );
    let root = ServerMessage::create(
        &mut fbb,
        &ServerMessageArgs {
            body_type: ServerBody::Reply,
            body: Some(body.as_union_value()),
        },
    );
    fbb.finish(root, Some("NXSM"));
    fbb.finished_data().to_vec()
}

/// Every malformed corpus frame, in a fixed order.
///
/// # Panics
/// If a base frame does not encode (a defect of the corpus).
pub fn malformed_frames() -> Vec<MalformedFrame> {
    let frame = |name, ext, bytes: Vec<u8>, expected| MalformedFrame {
        name,
        ext,
        bytes: Bytes::from(bytes),
        expected,
    };
    let field = |table, member, fault| Expected::Field {
        site: Site::new(table, member),
        fault,
    };

    let reply_bytes = base_reply();
    let notice = base_notice();

    let short = notice[..5].to_vec();
    let half = reply_bytes[..reply_bytes.len() / 2].to_vec();

    let mut renamed = notice.clone();
    renamed[4..8].copy_from_slice(b"NXQQ");

    let mut past_end = notice.clone();
    let beyond = u32::try_from(past_end.len() + 64).unwrap_or(u32::MAX);
    past_end[0..4].copy_from_slice(&beyond.to_le_bytes());

    let mut bad_vtable = notice.clone();
    let table = root_table(&bad_vtable);
    bad_vtable[table..table + 4].copy_from_slice(&(-0x0100_0000i32).to_le_bytes());

    let mut bad_utf8 = encode::<ServerMessageRoot>(&server(ServerBodyT::ServerNotice(Box::new(
        ServerNoticeT {
            level: Some(NoticeLevel::Warning),
            message: text("before @@@@ after"),
        },
    ))));
    replace_once(&mut bad_utf8, b"@@@@", &[0xc3, 0x28, 0xff, 0x80]);

    // The undeclared discriminant is patched into a valid frame: the byte is found through the
    // root table's vtable, and the NONE variant is built member by member.
    let mut undeclared_union = notice.clone();
    let tag_at = member_position(
        &undeclared_union,
        root_table(&notice),
        ServerMessage::VT_BODY_TYPE,
    );
    assert_eq!(undeclared_union[tag_at], ServerBody::ServerNotice.0);
    undeclared_union[tag_at] = 200;

    let cancelled_without_stage = pack_unchecked::<ServerMessageRoot>(&reply(
        32,
        ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT { stage: None })),
    ));
    // A backup summary whose domain cut does not say its kind (A-1 needs it).
    let mut backup = command_outcome(
        "exec-backup-3",
        OutcomeOrigin::Executed,
        CommandDispositionT::CommandCompleted(Box::default()),
        "",
    );
    let mut summary = backup_summary(None);
    summary.domains[1].cut.kind = None;
    backup.backup = Some(summary);
    let cut_without_kind = pack_unchecked::<ServerMessageRoot>(&command_reply(33, backup));
    let reply_to_zero = pack_unchecked::<ServerMessageRoot>(&reply(
        0,
        ReplyBodyT::CancelOutcome(Box::new(CancelOutcomeT {
            target_request_id: 5,
            state: Some(CancelState::Requested),
        })),
    ));
    let empty_rows = pack_unchecked::<ServerMessageRoot>(&server(ServerBodyT::SubscriptionRows(
        Box::new(SubscriptionRowsT {
            subscription: handle("totals", 1),
            batch: Box::new(RowBatchT {
                branch_key: None,
                rows: Vec::new(),
            }),
        }),
    )));
    let short_digest = pack_unchecked::<BackupDownloadMessageRoot>(&BackupDownloadMessageT {
        part: BackupDownloadPartT::BackupArchiveStart(Box::new(BackupArchiveStartT {
            total_bytes: 1024,
            digest: Box::new(FingerprintT {
                bytes: fingerprint(51).bytes[..31].to_vec(),
            }),
        })),
    });
    let no_body = empty_server_message();
    let zero_producer = pack_unchecked::<ClientMessageRoot>(&client(
        40,
        ClientRequestT::CloseIngestorRequest(Box::new(CloseIngestorRequestT { producer: 0 })),
    ));
    let oversized = pack_unchecked::<UploadMessageRoot>(&UploadMessageT {
        part: UploadPartT::UploadChunk(Box::new(UploadChunkT {
            bytes: vec![0; FRAME_LIMIT],
        })),
    });
    let oversized_len = oversized.len();

    vec![
        frame(
            "truncated-below-eight-bytes",
            "nxsm",
            short,
            Expected::TooShort { len: 5 },
        ),
        frame(
            "truncated-in-half",
            "nxsm",
            half,
            Expected::Unverifiable(Verification::RangeOutOfBounds),
        ),
        frame(
            "identifier-server-frame-read-as-upload-reply",
            "nxur",
            notice.clone(),
            Expected::WrongIdentifier { found: *b"NXSM" },
        ),
        frame(
            "identifier-bytes-changed",
            "nxsm",
            renamed,
            Expected::WrongIdentifier { found: *b"NXQQ" },
        ),
        frame(
            "offset-root-past-end",
            "nxsm",
            past_end,
            Expected::Unverifiable(Verification::RangeOutOfBounds),
        ),
        frame(
            "offset-vtable-out-of-range",
            "nxsm",
            bad_vtable,
            Expected::Unverifiable(Verification::SignedOffsetOutOfBounds),
        ),
        frame(
            "utf8-invalid-string",
            "nxsm",
            bad_utf8,
            Expected::Unverifiable(Verification::Utf8),
        ),
        frame(
            "oversized-frame",
            "nxum",
            oversized,
            Expected::TooLarge { len: oversized_len },
        ),
        frame(
            "union-none",
            "nxsm",
            server_message_with_tag(0),
            field("ServerMessage", "body", Fault::NoneUnion),
        ),
        frame(
            "union-undeclared-discriminant",
            "nxsm",
            undeclared_union,
            field("ServerMessage", "body", Fault::UndeclaredUnion { tag: 200 }),
        ),
        frame(
            "union-required-missing",
            "nxsm",
            no_body,
            Expected::Unverifiable(Verification::MissingRequiredField("body")),
        ),
        frame(
            "enum-undeclared-value",
            "nxsm",
            rejected_with_raw_reason(99),
            field(
                "RequestRejected",
                "rejection",
                Fault::UndeclaredEnum { value: 99 },
            ),
        ),
        frame(
            "required-scalar-absent",
            "nxsm",
            cancelled_without_stage,
            field("RequestCancelled", "stage", Fault::Absent),
        ),
        frame(
            "backup-cut-kind-absent",
            "nxsm",
            cut_without_kind,
            field("BackupCut", "kind", Fault::Absent),
        ),
        frame(
            "zero-reply-request-id",
            "nxsm",
            reply_to_zero,
            field("Reply", "request_id", Fault::Zero),
        ),
        frame(
            "zero-producer",
            "nxcm",
            zero_producer,
            field("CloseIngestorRequest", "producer", Fault::Zero),
        ),
        frame(
            "empty-row-batch",
            "nxsm",
            empty_rows,
            field("RowBatch", "rows", Fault::Empty),
        ),
        frame(
            "length-fingerprint-31-bytes",
            "nxbd",
            short_digest,
            field(
                "Fingerprint",
                "bytes",
                Fault::Length {
                    expected: 32,
                    found: 31,
                },
            ),
        ),
    ]
}

// ===== Files =====

/// Escapes a violation's `Display` for one TSV cell.
pub fn tsv_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out
}

/// The text of `malformed.tsv` for `frames`: what their readers report, one line each.
///
/// # Panics
/// If a malformed frame passes its reader.
pub fn malformed_tsv(frames: &[MalformedFrame]) -> String {
    let mut out = String::from(
        "# Malformed corpus frames: file malformed/<name>.bin, the root whose reader must refuse \
         it, the rule broken, and the violation's Display (\\\\, \\t, \\n escaped).\n\
         # name\troot\trule\tviolation\n",
    );
    for m in frames {
        let violation = match check_as(m.ext, m.bytes.clone()) {
            Some(Err(v)) => v,
            Some(Ok(_)) => panic!("malformed frame {} passes its reader", m.name),
            None => panic!("malformed frame {} names no root", m.name),
        };
        let _ = writeln!(
            out,
            "{}\t{}\t{}\t{}",
            m.name,
            m.root(),
            violation.rule(),
            tsv_escape(&violation.to_string())
        );
    }
    out
}

/// Every file of the corpus directory as (path relative to it, contents), in a fixed order.
pub fn corpus_files() -> Vec<(String, Bytes)> {
    let valid = valid_frames();
    let malformed = malformed_frames();
    let mut files: Vec<(String, Bytes)> = valid.clone();
    files.push((text("report.txt"), Bytes::from(report_text(&valid))));
    files.push((
        text("coverage.txt"),
        Bytes::from(crate::coverage::coverage_text(&valid)),
    ));
    files.push((
        text("malformed.tsv"),
        Bytes::from(malformed_tsv(&malformed)),
    ));
    for m in &malformed {
        files.push((format!("malformed/{}", m.file_name()), m.bytes.clone()));
    }
    files
}

/// The files below `dir`, as paths relative to it with `/` separators, sorted.
pub fn list_files(dir: &Path) -> std::io::Result<BTreeSet<String>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeSet<String>) -> std::io::Result<()> {
        if !dir.exists() {
            return Ok(());
        }
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(base, &path, out)?;
            } else {
                let rel = path.strip_prefix(base).unwrap_or(&path);
                let parts: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                out.insert(parts.join("/"));
            }
        }
        Ok(())
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out)?;
    Ok(out)
}

/// Writes every corpus file into `dir` and removes files there that the builders no longer
/// produce. Returns the number of files written.
pub fn write_corpus(dir: &Path) -> std::io::Result<usize> {
    let files = corpus_files();
    let wanted: BTreeSet<String> = files.iter().map(|(name, _)| name.clone()).collect();
    for stale in list_files(dir)?.difference(&wanted) {
        std::fs::remove_file(dir.join(stale))?;
    }
    std::fs::create_dir_all(dir.join("malformed"))?;
    for (name, bytes) in &files {
        std::fs::write(dir.join(name), bytes)?;
    }
    Ok(files.len())
}
