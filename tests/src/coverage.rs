//! Which union variants and enum values of the schema the corpus carries.
//!
//! The list of what a frame can carry comes from `schema/session.fbs` itself, read with the same
//! schema reader that generates the protocol's checks (`nervix-schema-gen`), starting from the eight frame roots. What the
//! corpus carries comes from the frames' reports, each line resolved through the schema to the
//! union or enum its member is declared with.

use crate::corpus::{check_as, extension, root_name, CorpusFile};
pub(crate) use model::Schema;
use model::{Kind, Ty};
use nervix_protocol::frame::ROOT_EXTENSIONS;
use nervix_schema_gen::model;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// A union variant (`ServerBody`, `Reply`) or enum value (`NoticeLevel`, `Info`).
pub type Value = (String, String);

/// What the corpus carries against what the schema declares.
#[derive(Debug)]
pub struct Coverage {
    /// Every union variant and enum value a frame of some root can carry.
    pub declared: BTreeSet<Value>,
    /// Each of them the corpus carries, with the first frame (in file-name order) carrying it.
    pub carried: BTreeMap<Value, String>,
    /// Every vector member marked `[nonempty]` a frame can carry, as (table, member).
    pub nonempty: BTreeSet<Value>,
    /// The shortest length the corpus gives each such member, with the first frame giving it.
    pub shortest: BTreeMap<Value, (usize, String)>,
}

impl Coverage {
    /// The declared values no corpus frame carries.
    pub fn missing(&self) -> Vec<&Value> {
        self.declared
            .iter()
            .filter(|v| !self.carried.contains_key(*v))
            .collect()
    }
}

/// The schema, read from `schema/session.fbs`.
pub(crate) fn schema() -> Schema {
    let path = crate::workspace_root().join("schema").join("session.fbs");
    let src = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("schema/session.fbs cannot be read: {e}"));
    model::parse(&src)
}

fn fields<'s>(s: &'s Schema, table: &str) -> &'s [model::Field] {
    s.tables
        .iter()
        .chain(s.structs.iter())
        .find(|t| t.name == table)
        .map(|t| t.fields.as_slice())
        .unwrap_or_else(|| panic!("schema: no table {table}"))
}

fn enum_values<'s>(s: &'s Schema, name: &str) -> &'s [String] {
    &s.enums
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("schema: no enum {name}"))
        .values
}

/// Every union variant and enum value reachable from the frame roots.
pub(crate) fn declared(s: &Schema) -> BTreeSet<Value> {
    reachable(s).0
}

/// Every table and struct reachable from the frame roots.
fn reachable_tables(s: &Schema) -> BTreeSet<String> {
    reachable(s).1
}

/// What the frame roots reach: union variants and enum values, and tables and structs.
fn reachable(s: &Schema) -> (BTreeSet<Value>, BTreeSet<String>) {
    let roots: Vec<&str> = ROOT_EXTENSIONS.iter().map(|(_, r)| *r).collect();
    let mut out = BTreeSet::new();
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
    while let Some(table) = todo.pop() {
        if !seen.insert(table.clone()) {
            continue;
        }
        for f in fields(s, &table) {
            let mut ty = &f.ty;
            while let Ty::Vector(inner) = ty {
                ty = inner;
            }
            let Ty::Named(n) = ty else { continue };
            match s.kind(n) {
                Kind::Table | Kind::Struct => todo.push(n.clone()),
                Kind::Enum => {
                    for v in enum_values(s, n) {
                        out.insert((n.clone(), v.clone()));
                    }
                }
                Kind::Union => {
                    for v in &s.union(n).variants {
                        out.insert((n.clone(), v.clone()));
                        todo.push(v.clone());
                    }
                }
            }
        }
    }
    (out, seen)
}

/// The union variants and enum values one frame's report carries.
fn carried_by(s: &Schema, root: &str, report: &str) -> Vec<Value> {
    carried_and_lengths(s, root, report).0
}

/// The length a report line gives a vector: `len:N`, `[a,b]` or `bytes:<hex>`.
fn vector_len(value: &str) -> Option<usize> {
    if let Some(n) = value.strip_prefix("len:") {
        return n.parse().ok();
    }
    if let Some(hex) = value.strip_prefix("bytes:") {
        return Some(hex.len() / 2);
    }
    let inner = value.strip_prefix('[')?.strip_suffix(']')?;
    Some(if inner.is_empty() {
        0
    } else {
        inner.split(',').count()
    })
}

/// The union variants and enum values a report carries, and the length of every vector member
/// marked `[nonempty]`, as ((table, member), length).
fn carried_and_lengths(s: &Schema, root: &str, report: &str) -> (Vec<Value>, Vec<(Value, usize)>) {
    let mut out = Vec::new();
    let mut lengths = Vec::new();
    // The table each union member holds, by the member's full path.
    let mut variants: BTreeMap<String, String> = BTreeMap::new();
    for line in report.lines() {
        let Some((path, value)) = line.split_once('=') else {
            continue;
        };
        let comps: Vec<&str> = path.split('.').collect();
        let mut table = root.to_string();
        let mut prefix = String::new();
        for (i, comp) in comps.iter().enumerate() {
            if !prefix.is_empty() {
                prefix.push('.');
            }
            prefix.push_str(comp);
            let name = comp.split('[').next().unwrap_or(comp);
            let Some(f) = fields(s, &table).iter().find(|f| f.name == name) else {
                panic!("report line {line:?}: {table} has no member {name}");
            };
            let last = i + 1 == comps.len();
            if last && matches!(f.ty, Ty::Vector(_)) && f.marks.contains(&model::Mark::NonEmpty) {
                if let Some(n) = vector_len(value) {
                    lengths.push(((table.clone(), f.name.clone()), n));
                }
            }
            let (ty, in_vector) = match &f.ty {
                Ty::Vector(inner) => (&**inner, true),
                t => (t, false),
            };
            let Ty::Named(n) = ty else { break };
            match s.kind(n) {
                Kind::Table | Kind::Struct => table = n.clone(),
                Kind::Union if last => {
                    variants.insert(prefix.clone(), value.to_string());
                    out.push((n.clone(), value.to_string()));
                }
                Kind::Union => match variants.get(&prefix) {
                    Some(t) => table = t.clone(),
                    None => panic!("report line {line:?}: {prefix} has no variant line before"),
                },
                Kind::Enum if last => {
                    let list = if in_vector {
                        value
                            .strip_prefix('[')
                            .and_then(|v| v.strip_suffix(']'))
                            .unwrap_or("")
                    } else {
                        value
                    };
                    for v in list.split(',').filter(|v| !v.is_empty() && *v != "none") {
                        out.push((n.clone(), v.to_string()));
                    }
                }
                Kind::Enum => break,
            }
        }
    }
    (out, lengths)
}

/// Every vector member marked `[nonempty]` that a frame can carry, as (table, member).
pub(crate) fn nonempty_vectors(s: &Schema) -> BTreeSet<Value> {
    let reachable = reachable_tables(s);
    s.tables
        .iter()
        .filter(|t| reachable.contains(&t.name))
        .flat_map(|t| {
            t.fields
                .iter()
                .filter(|f| {
                    matches!(f.ty, Ty::Vector(_)) && f.marks.contains(&model::Mark::NonEmpty)
                })
                .map(|f| (t.name.clone(), f.name.clone()))
        })
        .collect()
}

/// The coverage of `frames` (valid corpus frames, as named files).
///
/// # Panics
/// If a frame does not pass its root's checked reader, or its report names a member the schema
/// does not declare.
pub fn coverage(frames: &[CorpusFile]) -> Coverage {
    let s = schema();
    let declared = declared(&s);
    let mut sorted: Vec<&CorpusFile> = frames.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut carried = BTreeMap::new();
    let mut shortest: BTreeMap<Value, (usize, String)> = BTreeMap::new();
    for (name, bytes) in sorted {
        let (values, lengths) = carried_and_lengths(&s, root_of(name), &report_of(name, bytes));
        for v in values {
            carried.entry(v).or_insert_with(|| name.clone());
        }
        for (member, n) in lengths {
            let e = shortest.entry(member).or_insert((n, name.clone()));
            if n < e.0 {
                *e = (n, name.clone());
            }
        }
    }
    Coverage {
        declared,
        carried,
        nonempty: nonempty_vectors(&s),
        shortest,
    }
}

fn root_of(name: &str) -> &'static str {
    root_name(extension(name)).unwrap_or_else(|| panic!("{name} names no root"))
}

fn report_of(name: &str, bytes: &bytes::Bytes) -> String {
    match check_as(extension(name), bytes.clone()) {
        Some(Ok(r)) => r,
        _ => panic!("corpus frame {name} is not valid"),
    }
}

/// The union variants and enum values the corpus frame `name` carries.
pub(crate) fn carried_by_frame(s: &Schema, name: &str, bytes: &bytes::Bytes) -> Vec<Value> {
    carried_by(s, root_of(name), &report_of(name, bytes))
}

/// `coverage.txt`: every declared union variant and enum value, one a line, with the first frame
/// that carries it, or `MISSING`.
pub fn coverage_text(frames: &[CorpusFile]) -> String {
    let c = coverage(frames);
    let mut out = String::from(
        "# Every union variant and enum value a frame can carry, and the first corpus frame that \
         carries it.\n",
    );
    for v in &c.declared {
        let at = c.carried.get(v).map_or("MISSING", String::as_str);
        let _ = writeln!(out, "{}.{}\t{at}", v.0, v.1);
    }
    out.push_str("# Every vector member marked [nonempty], the shortest length the corpus gives it, and where.\n");
    for m in &c.nonempty {
        match c.shortest.get(m) {
            Some((n, at)) => {
                let _ = writeln!(out, "{}.{}\tlen={n}\t{at}", m.0, m.1);
            }
            None => {
                let _ = writeln!(out, "{}.{}\tMISSING", m.0, m.1);
            }
        }
    }
    out
}
