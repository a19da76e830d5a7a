//! Which union variants and enum values of the schema the corpus carries.
//!
//! The list of what a frame can carry comes from `schema/session.fbs` itself, read with the same
//! schema reader the protocol's build script uses, starting from the eight frame roots. What the
//! corpus carries comes from the frames' reports, each line resolved through the schema to the
//! union or enum its member is declared with.

#[path = "../../protocol/build/model.rs"]
#[allow(dead_code, clippy::all)]
mod model;

use crate::corpus::{check_as, extension, root_name, CorpusFile};
pub(crate) use model::Schema;
use model::{Kind, Ty};
use nervix_protocol::frame::ROOT_EXTENSIONS;
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
    out
}

/// The union variants and enum values one frame's report carries.
fn carried_by(s: &Schema, root: &str, report: &str) -> Vec<Value> {
    let mut out = Vec::new();
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
    out
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
    for (name, bytes) in sorted {
        for v in carried_by_frame(&s, name, bytes) {
            carried.entry(v).or_insert_with(|| name.clone());
        }
    }
    Coverage { declared, carried }
}

/// The union variants and enum values the corpus frame `name` carries.
pub(crate) fn carried_by_frame(s: &Schema, name: &str, bytes: &bytes::Bytes) -> Vec<Value> {
    let ext = extension(name);
    let root = root_name(ext).unwrap_or_else(|| panic!("{name} names no root"));
    let report = match check_as(ext, bytes.clone()) {
        Some(Ok(r)) => r,
        _ => panic!("corpus frame {name} is not valid"),
    };
    carried_by(s, root, &report)
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
    out
}
