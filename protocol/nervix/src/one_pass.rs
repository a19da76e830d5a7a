//! One pass over a frame carrying rows that verifies it and checks its semantic rules together.
//!
//! [`crate::frame::check_slice`] verifies a frame with the verifier flatc generates and then
//! walks it a second time for the schema's semantic rules (F-4). For a `ServerMessage` whose
//! body is `SubscriptionRows`, the largest and most frequent frame a client reads, that second
//! walk costs about a tenth more than verification alone. This module does both in one walk.
//!
//! It makes the same calls on the same [`Verifier`], in the same order and with the same
//! arguments, as the generated verifier of `ServerMessage` makes for a `SubscriptionRows` body
//! and everything below it (`SubscriptionHandle`, `RowBatch`, `BranchKey`, `Row`, `Cell` with
//! every cell variant, `ListCell`). So the verifier's state (bounds, alignment, tables counted,
//! depth, apparent size) evolves exactly as it does in the generated code, and the pass fails
//! verification exactly where that code fails. At each table it also checks that table's
//! semantic rules, reading the values the verifier has just bounded: a declared, non-NONE cell
//! variant, the present `value` of F32Cell and F64Cell, a non-empty `rows`, a non-zero
//! subscription generation.
//!
//! The pass answers only whether the frame is accepted. Whatever it does not accept (another
//! body, a malformed frame, a broken rule) goes through the two-pass path, which finds and
//! names the fault; so which typed error a frame gets never depends on this module. The unit
//! tests below compare its answer with the two-pass path's on valid frames and on frames with
//! bytes overwritten at random.

use crate::schema::{
    BoolCell, BranchKey, BytesCell, Cell, CellValue, DatetimeCell, F32Cell, F64Cell, I16Cell,
    I32Cell, I64Cell, I8Cell, ListCell, NullCell, RedactedCell, Row, RowBatch, ServerBody,
    ServerMessage, StringCell, SubscriptionHandle, SubscriptionRows, U16Cell, U32Cell, U64Cell,
    U8Cell,
};
use flatbuffers::{ForwardsUOffset, InvalidFlatbuffer, Verifiable, Verifier, VerifierOptions};

/// The pass stopped: the frame failed verification, broke a rule, or is not one this pass
/// reads. The two-pass path tells which.
struct Stop;

impl From<InvalidFlatbuffer> for Stop {
    #[inline]
    fn from(_: InvalidFlatbuffer) -> Self {
        Stop
    }
}

type Pass<T = ()> = Result<T, Stop>;

/// Whether `buf`, a frame whose size and identifier were checked, is a `ServerMessage` with a
/// `SubscriptionRows` body that passes verification under `opts` and every semantic rule:
/// `Some` if so, holding whether its rows are alike ([`Alike`]). `None` means only "not
/// accepted here": the caller checks such a frame the two-pass way.
pub(crate) fn rows_frame_checks(buf: &[u8], opts: &VerifierOptions) -> Option<bool> {
    let mut v = Verifier::new(opts, buf);
    let mut alike = Alike::new();
    server_message(&mut v, buf, &mut alike).ok()?;
    Some(alike.alike)
}

/// Whether `buf`, a frame whose size and identifier were checked, reads as a `ServerMessage`
/// whose body type is `SubscriptionRows`, looked up without verification (every read is
/// bounded, nothing is trusted). It only chooses the path: a frame it names goes through
/// [`rows_frame_checks`] first, any other straight to the two-pass path, which verifies it
/// whole; so a wrong answer could only make a frame slower to check, never change its verdict.
/// A frame that verifies always reads here as it reads after verification.
pub(crate) fn carries_rows(buf: &[u8]) -> bool {
    peek_body_type(buf) == Some(ServerBody::SubscriptionRows.0)
}

/// The root table's `body_type` byte as the generated accessor would read it (absent reads
/// as `NONE`), or `None` when a read falls outside `buf`.
fn peek_body_type(buf: &[u8]) -> Option<u8> {
    let le4 = |at: usize| -> Option<[u8; 4]> { buf.get(at..at.checked_add(4)?)?.try_into().ok() };
    let le2 = |at: usize| -> Option<u16> {
        Some(u16::from_le_bytes(
            buf.get(at..at.checked_add(2)?)?.try_into().ok()?,
        ))
    };
    let table = usize::try_from(u32::from_le_bytes(le4(0)?)).ok()?;
    let back = i64::from(i32::from_le_bytes(le4(table)?));
    let vtable = usize::try_from(i64::try_from(table).ok()?.checked_sub(back)?).ok()?;
    let vtable_len = usize::from(le2(vtable)?);
    let field = usize::from(ServerMessage::VT_BODY_TYPE);
    if field + 2 > vtable_len {
        return Some(ServerBody::NONE.0);
    }
    match le2(vtable.checked_add(field)?)? {
        0 => Some(ServerBody::NONE.0),
        at => buf.get(table.checked_add(usize::from(at))?).copied(),
    }
}

/// The most cells a first row may hold for the rows to be found alike; wider batches are
/// simply not noted as alike.
const ALIKE_WIDTH: usize = 256;

/// Notes, while the rows are walked, whether every row is like the first: the same number of
/// cells, the same variant at each place, and no list cell anywhere (a list's elements matter
/// to R-2, a scalar cell's value does not).
struct Alike {
    first: [u8; ALIKE_WIDTH],
    width: usize,
    rows: usize,
    alike: bool,
}

impl Alike {
    fn new() -> Self {
        Alike {
            first: [0; ALIKE_WIDTH],
            width: 0,
            rows: 0,
            alike: true,
        }
    }
}

/// What a walk of a vector of cells notes about them.
trait Note {
    /// The cell at `index` holds `tag`.
    fn cell(&mut self, index: usize, tag: CellValue);
    /// The vector held `len` cells.
    fn end(&mut self, len: usize);
}

/// Nothing is noted about a branch key's cells or a list's elements.
struct Nothing;

impl Note for Nothing {
    #[inline]
    fn cell(&mut self, _: usize, _: CellValue) {}
    #[inline]
    fn end(&mut self, _: usize) {}
}

impl Note for Alike {
    #[inline]
    fn cell(&mut self, index: usize, tag: CellValue) {
        if tag == CellValue::ListCell {
            self.alike = false;
        } else if self.rows == 0 {
            match self.first.get_mut(index) {
                Some(t) => *t = tag.0,
                None => self.alike = false,
            }
        } else if index >= self.width || self.first.get(index) != Some(&tag.0) {
            self.alike = false;
        }
    }
    #[inline]
    fn end(&mut self, len: usize) {
        if self.rows == 0 {
            self.width = len;
        } else if len != self.width {
            self.alike = false;
        }
        self.rows += 1;
    }
}

/// The byte at `pos`, which the verifier has bounded.
#[inline]
fn byte(buf: &[u8], pos: usize) -> Pass<u8> {
    buf.get(pos).copied().ok_or(Stop)
}

/// Follows the offset at `pos`, as the verifier of `ForwardsUOffset` does.
#[inline]
fn follow(v: &mut Verifier<'_, '_>, pos: usize) -> Pass<usize> {
    let offset = v.get_uoffset(pos)? as usize;
    Ok(offset.saturating_add(pos))
}

/// Bounds the vector of offsets at `pos` as the verifier of `Vector<ForwardsUOffset<T>>` does,
/// and returns where its entries start and how many there are.
#[inline]
fn offsets(v: &mut Verifier<'_, '_>, pos: usize) -> Pass<(usize, usize)> {
    let len = v.get_uoffset(pos)? as usize;
    let start = pos.saturating_add(flatbuffers::SIZE_UOFFSET);
    v.is_aligned::<ForwardsUOffset<Cell<'_>>>(start)?;
    let size = len.saturating_mul(core::mem::size_of::<ForwardsUOffset<Cell<'_>>>());
    v.range_in_buffer(start, size)?;
    Ok((start, len))
}

/// The root table (`root_with_opts`, then `ServerMessage`'s verifier with its body union).
fn server_message(v: &mut Verifier<'_, '_>, buf: &[u8], alike: &mut Alike) -> Pass {
    let root = follow(v, 0)?;
    let mut t = v.visit_table(root)?;
    let value = t.deref(ServerMessage::VT_BODY)?;
    let key = t.deref(ServerMessage::VT_BODY_TYPE)?;
    let (Some(key), Some(value)) = (key, value) else {
        return Err(Stop);
    };
    ServerBody::run_verifier(t.verifier(), key)?;
    if ServerBody(byte(buf, key)?) != ServerBody::SubscriptionRows {
        return Err(Stop);
    }
    let rows = follow(t.verifier(), value)?;
    subscription_rows(t.verifier(), buf, rows, alike)?;
    t.finish();
    Ok(())
}

fn subscription_rows(v: &mut Verifier<'_, '_>, buf: &[u8], pos: usize, alike: &mut Alike) -> Pass {
    let mut t = v.visit_table(pos)?;
    let Some(handle) = t.deref(SubscriptionRows::VT_SUBSCRIPTION)? else {
        return Err(Stop);
    };
    let handle = follow(t.verifier(), handle)?;
    subscription_handle(t.verifier(), buf, handle)?;
    let Some(batch) = t.deref(SubscriptionRows::VT_BATCH)? else {
        return Err(Stop);
    };
    let batch = follow(t.verifier(), batch)?;
    row_batch(t.verifier(), buf, batch, alike)?;
    t.finish();
    Ok(())
}

/// The handle's name is required; its generation must not be zero (absent reads as zero).
fn subscription_handle(v: &mut Verifier<'_, '_>, buf: &[u8], pos: usize) -> Pass {
    let mut t = v.visit_table(pos)?;
    let Some(name) = t.deref(SubscriptionHandle::VT_NAME)? else {
        return Err(Stop);
    };
    <ForwardsUOffset<&str>>::run_verifier(t.verifier(), name)?;
    let Some(generation) = t.deref(SubscriptionHandle::VT_GENERATION)? else {
        return Err(Stop);
    };
    u64::run_verifier(t.verifier(), generation)?;
    let bytes = buf.get(generation..generation + 8).ok_or(Stop)?;
    if bytes.iter().all(|&b| b == 0) {
        return Err(Stop);
    }
    t.finish();
    Ok(())
}

/// The optional branch key, then the rows, which must not be empty.
fn row_batch(v: &mut Verifier<'_, '_>, buf: &[u8], pos: usize, alike: &mut Alike) -> Pass {
    let mut t = v.visit_table(pos)?;
    if let Some(key) = t.deref(RowBatch::VT_BRANCH_KEY)? {
        let key = follow(t.verifier(), key)?;
        cells_table(t.verifier(), buf, key, BranchKey::VT_CELLS, &mut Nothing)?;
    }
    let Some(rows) = t.deref(RowBatch::VT_ROWS)? else {
        return Err(Stop);
    };
    let rows = follow(t.verifier(), rows)?;
    let (start, len) = offsets(t.verifier(), rows)?;
    if len == 0 {
        return Err(Stop);
    }
    for i in 0..len {
        let row = follow(t.verifier(), start + 4 * i)?;
        cells_table(t.verifier(), buf, row, Row::VT_CELLS, alike)?;
    }
    t.finish();
    Ok(())
}

/// A table whose one field is a required vector of cells at `slot`: a Row, a BranchKey or a
/// ListCell; `note` is told each cell's variant.
fn cells_table<N: Note>(
    v: &mut Verifier<'_, '_>,
    buf: &[u8],
    pos: usize,
    slot: u16,
    note: &mut N,
) -> Pass {
    let mut t = v.visit_table(pos)?;
    let Some(cells) = t.deref(slot)? else {
        return Err(Stop);
    };
    let cells = follow(t.verifier(), cells)?;
    let (start, len) = offsets(t.verifier(), cells)?;
    for i in 0..len {
        let c = follow(t.verifier(), start + 4 * i)?;
        let tag = cell(t.verifier(), buf, c)?;
        note.cell(i, tag);
    }
    note.end(len);
    t.finish();
    Ok(())
}

/// A cell: its union must hold a declared variant (not NONE), each verified as generated; the
/// float variants must carry their value, and a list's elements are cells in turn. Returns
/// the variant.
fn cell(v: &mut Verifier<'_, '_>, buf: &[u8], pos: usize) -> Pass<CellValue> {
    let mut t = v.visit_table(pos)?;
    let value = t.deref(Cell::VT_VALUE)?;
    let key = t.deref(Cell::VT_VALUE_TYPE)?;
    let (Some(key), Some(value)) = (key, value) else {
        return Err(Stop);
    };
    CellValue::run_verifier(t.verifier(), key)?;
    let v = t.verifier();
    let tag = CellValue(byte(buf, key)?);
    match tag {
        CellValue::NullCell => <ForwardsUOffset<NullCell<'_>>>::run_verifier(v, value)?,
        CellValue::RedactedCell => <ForwardsUOffset<RedactedCell<'_>>>::run_verifier(v, value)?,
        CellValue::U8Cell => <ForwardsUOffset<U8Cell<'_>>>::run_verifier(v, value)?,
        CellValue::I8Cell => <ForwardsUOffset<I8Cell<'_>>>::run_verifier(v, value)?,
        CellValue::U16Cell => <ForwardsUOffset<U16Cell<'_>>>::run_verifier(v, value)?,
        CellValue::I16Cell => <ForwardsUOffset<I16Cell<'_>>>::run_verifier(v, value)?,
        CellValue::U32Cell => <ForwardsUOffset<U32Cell<'_>>>::run_verifier(v, value)?,
        CellValue::I32Cell => <ForwardsUOffset<I32Cell<'_>>>::run_verifier(v, value)?,
        CellValue::U64Cell => <ForwardsUOffset<U64Cell<'_>>>::run_verifier(v, value)?,
        CellValue::I64Cell => <ForwardsUOffset<I64Cell<'_>>>::run_verifier(v, value)?,
        CellValue::F32Cell => {
            let c = follow(v, value)?;
            present_float::<f32>(v, c, F32Cell::VT_VALUE)?;
        }
        CellValue::F64Cell => {
            let c = follow(v, value)?;
            present_float::<f64>(v, c, F64Cell::VT_VALUE)?;
        }
        CellValue::BoolCell => <ForwardsUOffset<BoolCell<'_>>>::run_verifier(v, value)?,
        CellValue::StringCell => <ForwardsUOffset<StringCell<'_>>>::run_verifier(v, value)?,
        CellValue::DatetimeCell => <ForwardsUOffset<DatetimeCell<'_>>>::run_verifier(v, value)?,
        CellValue::ListCell => {
            let c = follow(v, value)?;
            cells_table(v, buf, c, ListCell::VT_ELEMENTS, &mut Nothing)?;
        }
        // The BytesCell rule only reads its required value, which verification guarantees.
        CellValue::BytesCell => <ForwardsUOffset<BytesCell<'_>>>::run_verifier(v, value)?,
        // NONE, or a variant the schema does not declare.
        _ => return Err(Stop),
    }
    t.finish();
    Ok(tag)
}

/// An F32Cell or F64Cell table: its optional `value` at `slot` is verified as generated and
/// must be present.
#[inline]
fn present_float<F: Verifiable>(v: &mut Verifier<'_, '_>, pos: usize, slot: u16) -> Pass {
    let mut t = v.visit_table(pos)?;
    let Some(value) = t.deref(slot)? else {
        return Err(Stop);
    };
    F::run_verifier(t.verifier(), value)?;
    t.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::CheckRead;
    use crate::frame::{Root, ServerMessageRoot};
    use crate::limits::verifier_options;
    use crate::schema::*;
    use proptest::prelude::*;

    /// The two-pass path's answer to the same question.
    fn two_passes(buf: &[u8], opts: &VerifierOptions) -> bool {
        match flatbuffers::root_with_opts::<ServerMessage<'_>>(opts, buf) {
            Ok(view) => view.body_type() == ServerBody::SubscriptionRows && view.check().is_ok(),
            Err(_) => false,
        }
    }

    /// Whether the rows of a checked rows frame are alike, read plainly from its view.
    fn rows_alike(buf: &[u8]) -> bool {
        let view = flatbuffers::root::<ServerMessage<'_>>(buf).unwrap();
        let rows = view.body_as_subscription_rows().unwrap().batch().rows();
        let tags = |r: Row<'_>| r.cells().iter().map(|c| c.value_type()).collect::<Vec<_>>();
        let first = tags(rows.get(0));
        first.len() <= ALIKE_WIDTH
            && rows.iter().all(|r| {
                let t = tags(r);
                t == first && !t.contains(&CellValue::ListCell)
            })
    }

    #[test]
    fn r_2_rows_alike_is_noted_only_when_every_row_is_like_the_first() {
        let row = |tags: &[CellValueT]| RowT {
            cells: tags.iter().map(|v| CellT { value: v.clone() }).collect(),
        };
        let u8c = || CellValueT::U8Cell(Box::new(U8CellT { value: 1 }));
        let null = || CellValueT::NullCell(Box::default());
        let list = || CellValueT::ListCell(Box::new(ListCellT { elements: vec![] }));
        let frame = |rows: Vec<RowT>| {
            let msg = ServerMessageT {
                body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
                    subscription: Box::new(SubscriptionHandleT {
                        name: "s".to_owned(),
                        generation: 1,
                    }),
                    batch: Box::new(RowBatchT {
                        branch_key: None,
                        rows,
                    }),
                })),
            };
            let mut fbb = flatbuffers::FlatBufferBuilder::new();
            ServerMessageRoot::finish(&msg, &mut fbb);
            let buf = fbb.finished_data().to_vec();
            rows_frame_checks(&buf, &verifier_options(buf.len())).unwrap()
        };
        let same = || row(&[u8c(), null()]);
        assert!(frame(vec![same(), same(), same()]));
        assert!(frame(vec![same()]));
        // Another variant in a later row, in its first or its last place.
        assert!(!frame(vec![same(), same(), row(&[null(), null()])]));
        assert!(!frame(vec![same(), row(&[u8c(), u8c()]), same()]));
        // A later row longer or shorter than the first.
        assert!(!frame(vec![same(), row(&[u8c(), null(), u8c()])]));
        assert!(!frame(vec![same(), same(), row(&[u8c()])]));
        // A list anywhere, even in every row alike.
        assert!(!frame(vec![row(&[list()]), row(&[list()])]));
        // A first row wider than what is noted, and one exactly that wide.
        let wide = |n: usize| row(&vec![u8c(); n]);
        assert!(!frame(vec![wide(ALIKE_WIDTH + 1), wide(ALIKE_WIDTH + 1)]));
        assert!(frame(vec![wide(ALIKE_WIDTH), wide(ALIKE_WIDTH)]));
    }

    /// A small deterministic generator, so a failing case is its seed.
    struct Draw(u64);

    impl Draw {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    fn cell(d: &mut Draw, depth: u32) -> CellT {
        let value = match d.below(if depth < 2 { 17 } else { 16 }) {
            0 => CellValueT::NullCell(Box::default()),
            1 => CellValueT::RedactedCell(Box::default()),
            2 => CellValueT::U8Cell(Box::new(U8CellT { value: 7 })),
            3 => CellValueT::I8Cell(Box::new(I8CellT { value: -7 })),
            4 => CellValueT::U16Cell(Box::new(U16CellT { value: 700 })),
            5 => CellValueT::I16Cell(Box::new(I16CellT { value: -700 })),
            6 => CellValueT::U32Cell(Box::new(U32CellT { value: 70_000 })),
            7 => CellValueT::I32Cell(Box::new(I32CellT { value: -70_000 })),
            8 => CellValueT::U64Cell(Box::new(U64CellT { value: d.next() })),
            9 => CellValueT::I64Cell(Box::new(I64CellT { value: -1 })),
            // Left absent now and then: F-4 wants it present.
            10 => CellValueT::F32Cell(Box::new(F32CellT {
                value: (d.below(4) != 0).then_some(1.5),
            })),
            11 => CellValueT::F64Cell(Box::new(F64CellT {
                value: (d.below(4) != 0).then_some(-2.5),
            })),
            12 => CellValueT::BoolCell(Box::new(BoolCellT { value: true })),
            13 => CellValueT::StringCell(Box::new(StringCellT {
                value: "text".repeat(d.below(3) as usize),
            })),
            14 => CellValueT::DatetimeCell(Box::new(DatetimeCellT { unix_nanos: 42 })),
            15 => CellValueT::BytesCell(Box::new(BytesCellT {
                value: vec![9; d.below(5) as usize],
            })),
            _ => CellValueT::ListCell(Box::new(ListCellT {
                elements: (0..d.below(4)).map(|_| cell(d, depth + 1)).collect(),
            })),
        };
        CellT { value }
    }

    /// A rows frame packed without the encoder's checks, so it may break semantic rules.
    fn rows_frame(d: &mut Draw) -> Vec<u8> {
        let columns = d.below(4);
        let branch_key = (d.below(3) == 0).then(|| {
            Box::new(BranchKeyT {
                cells: (0..1 + d.below(2)).map(|_| cell(d, 0)).collect(),
            })
        });
        let rows = (0..d.below(5))
            .map(|_| RowT {
                cells: (0..columns).map(|_| cell(d, 0)).collect(),
            })
            .collect();
        let msg = ServerMessageT {
            body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
                subscription: Box::new(SubscriptionHandleT {
                    name: "s".to_owned(),
                    generation: d.below(8),
                }),
                batch: Box::new(RowBatchT { branch_key, rows }),
            })),
        };
        let mut fbb = flatbuffers::FlatBufferBuilder::new();
        ServerMessageRoot::finish(&msg, &mut fbb);
        fbb.finished_data().to_vec()
    }

    #[test]
    fn f_4_the_one_pass_accepts_a_conforming_rows_frame_and_no_other_body() {
        let mut d = Draw(0x5eed);
        let mut accepted = 0;
        for _ in 0..2_000 {
            let buf = rows_frame(&mut d);
            let opts = verifier_options(buf.len());
            let expected = two_passes(&buf, &opts);
            let found = rows_frame_checks(&buf, &opts);
            assert_eq!(found.is_some(), expected);
            if let Some(alike) = found {
                assert_eq!(alike, rows_alike(&buf), "seed state {}", d.0);
            }
            accepted += usize::from(expected);
        }
        assert!(accepted > 100, "the generator makes conforming frames too");
        let notice = ServerMessageT {
            body: ServerBodyT::ServerNotice(Box::new(ServerNoticeT {
                message: "hello".to_owned(),
                ..Default::default()
            })),
        };
        let mut fbb = flatbuffers::FlatBufferBuilder::new();
        ServerMessageRoot::finish(&notice, &mut fbb);
        let buf = fbb.finished_data();
        let opts = verifier_options(buf.len());
        assert!(flatbuffers::root_with_opts::<ServerMessage<'_>>(&opts, buf).is_ok());
        assert!(rows_frame_checks(buf, &opts).is_none());
    }

    /// A frame of any body (drawn by the value generators from `seed`); it verifies.
    fn drawn_frame(seed: u64) -> Vec<u8> {
        use crate::testkit::{Gen, Generate};
        let mut d = Draw(0x0dd5 + seed);
        let data: Vec<u8> = (0..512).map(|_| d.next() as u8).collect();
        let msg = ServerMessageT::generate(&mut Gen::new(&data));
        let mut fbb = flatbuffers::FlatBufferBuilder::new();
        ServerMessageRoot::finish(&msg, &mut fbb);
        fbb.finished_data().to_vec()
    }

    #[test]
    fn f_4_the_body_type_is_peeked_as_the_verified_frame_reads_it() {
        let mut d = Draw(0xb0d7);
        let mut frames: Vec<Vec<u8>> = (0..500).map(|_| rows_frame(&mut d)).collect();
        frames.extend((0..500).map(drawn_frame));
        let (mut rows, mut others) = (0, 0);
        for buf in &frames {
            let opts = verifier_options(buf.len());
            let view = flatbuffers::root_with_opts::<ServerMessage<'_>>(&opts, buf).unwrap();
            let is_rows = view.body_type() == ServerBody::SubscriptionRows;
            assert_eq!(carries_rows(buf), is_rows, "{:?}", view.body_type());
            assert_eq!(peek_body_type(buf), Some(view.body_type().0));
            rows += usize::from(is_rows);
            others += usize::from(!is_rows);
        }
        assert!(rows >= 500 && others > 300, "{rows} rows, {others} others");
        // A vtable as long as the body type's entry reads it; one shorter lacks it (NONE).
        let rows_tag = ServerBody::SubscriptionRows.0;
        let laid = |vtable_len: u8| {
            let mut b = vec![16, 0, 0, 0, b'N', b'X', b'S', b'M'];
            b.extend([vtable_len, 0, 8, 0, 4, 0, 0, 0]); // the vtable, at 8
            b.extend([8, 0, 0, 0, rows_tag, 0, 0, 0]); // the table, at 16
            b
        };
        assert_eq!(peek_body_type(&laid(8)), Some(rows_tag));
        assert_eq!(peek_body_type(&laid(6)), Some(rows_tag));
        assert_eq!(peek_body_type(&laid(4)), Some(ServerBody::NONE.0));
        assert!(carries_rows(&laid(6)) && !carries_rows(&laid(4)));
        // Reads past the end are refused, not made: a root offset, a table or a vtable
        // outside the buffer.
        assert_eq!(peek_body_type(&[0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0]), None);
        assert_eq!(peek_body_type(&[4, 0, 0, 0, 0x00, 0x00, 0x00, 0x80]), None);
        assert_eq!(peek_body_type(&[4, 0, 0, 0, 0xf0, 0xff, 0xff, 0x7f]), None);
    }

    #[test]
    fn f_4_a_received_rows_frame_is_checked_in_one_pass() {
        use crate::frame::Frame;
        let mut d = Draw(0xa11e);
        let (mut alike, mut seen) = (0, 0);
        for _ in 0..300 {
            let buf = rows_frame(&mut d);
            let opts = verifier_options(buf.len());
            if !two_passes(&buf, &opts) {
                continue;
            }
            seen += 1;
            let expected = rows_alike(&buf);
            let frame =
                Frame::<ServerMessageRoot>::check_with_limit(bytes::Bytes::from(buf), usize::MAX)
                    .unwrap();
            // Only the one pass notes rows alike: the two-pass path never does.
            assert_eq!(frame.rows_alike(), expected);
            alike += usize::from(expected);
        }
        assert!(seen > 20 && alike > 5, "{seen} conforming, {alike} alike");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3_000))]

        /// Any bytes at all: the peek answers without a panic, and a frame that verifies
        /// reads there as it reads after verification.
        #[test]
        fn f_4_the_peek_reads_any_bytes_and_agrees_with_verification(
            seed in 1u64..,
            other in 0usize..2,
            overwrites in proptest::collection::vec((any::<u16>(), any::<u8>()), 0..6),
            noise in proptest::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut buf = if other == 0 {
                rows_frame(&mut Draw(seed))
            } else {
                drawn_frame(seed)
            };
            for (at, b) in overwrites {
                let at = usize::from(at) % buf.len();
                buf[at] = b;
            }
            let opts = verifier_options(buf.len());
            if let Ok(view) = flatbuffers::root_with_opts::<ServerMessage<'_>>(&opts, &buf) {
                prop_assert_eq!(peek_body_type(&buf), Some(view.body_type().0));
            }
            let _ = carries_rows(&noise);
        }

        /// Overwritten bytes (offsets, vtables, tags, lengths, values) and tightened verifier
        /// limits: the one pass accepts exactly what the two passes accept.
        #[test]
        fn f_4_the_one_pass_accepts_exactly_what_verification_and_the_checks_accept(
            seed in 1u64..,
            overwrites in proptest::collection::vec((any::<u16>(), any::<u8>()), 0..4),
            depth in 1usize..12,
            tables in 1usize..80,
            apparent in 8usize..4_000,
            tighten in 0u8..4,
        ) {
            let mut d = Draw(seed);
            let mut buf = rows_frame(&mut d);
            for (at, b) in overwrites {
                let at = usize::from(at) % buf.len();
                buf[at] = b;
            }
            let mut opts = verifier_options(buf.len());
            match tighten {
                1 => opts.max_depth = depth,
                2 => opts.max_tables = tables,
                3 => opts.max_apparent_size = apparent,
                _ => {}
            }
            let found = rows_frame_checks(&buf, &opts);
            prop_assert_eq!(found.is_some(), two_passes(&buf, &opts));
            // No frame the one pass accepts is kept from it by the peek.
            prop_assert!(found.is_none() || carries_rows(&buf));
            if let Some(alike) = found {
                prop_assert_eq!(alike, rows_alike(&buf));
            }
        }
    }
}
