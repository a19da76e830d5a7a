//! A line-oriented report of everything a checked frame holds, exact to the bit.
//!
//! One line per member, `path=value`, in schema order. Integers are decimal, floats are their
//! bits in hex (`f32:80000000` is -0.0), text is its UTF-8 bytes in hex (`str:` followed by
//! nothing is the empty string), byte vectors are hex (`bytes:`), an absent optional is `none`,
//! enums and union variants are their declared names. A union member prints its variant on its
//! own line and then the variant's members under the same path. Vectors of tables print each
//! element's members under `name[i]`, then a closing line `name=len:N`.

use std::fmt::Write;

/// Appends report lines; used by the generated [`ReportFields`] impls.
#[derive(Debug, Default)]
pub struct Reporter {
    out: String,
    path: String,
}

/// A scalar as the report prints it.
pub trait ReportValue {
    /// Appends the value's exact rendering.
    fn render(&self, out: &mut String);
}

macro_rules! decimal {
    ($($t:ty),*) => {$(
        impl ReportValue for $t {
            fn render(&self, out: &mut String) {
                let _ = write!(out, "{self}");
            }
        }
    )*};
}
decimal!(u8, i8, u16, i16, u32, i32, u64, i64, bool);

impl ReportValue for f32 {
    fn render(&self, out: &mut String) {
        let _ = write!(out, "f32:{:08x}", self.to_bits());
    }
}

impl ReportValue for f64 {
    fn render(&self, out: &mut String) {
        let _ = write!(out, "f64:{:016x}", self.to_bits());
    }
}

/// Something with members to report: every table and struct of the schema.
pub trait ReportFields {
    /// Appends one line per member under the reporter's current path.
    fn report(&self, r: &mut Reporter);
}

impl<T: ReportFields + ?Sized> ReportFields for &T {
    fn report(&self, r: &mut Reporter) {
        (**self).report(r)
    }
}

/// An enum value by its declared name, or `?raw` when the schema declares none.
fn enum_name(out: &mut String, raw: u64, declared: Option<&str>) {
    match declared {
        Some(n) => out.push_str(n),
        None => {
            let _ = write!(out, "?{raw}");
        }
    }
}

fn hex(out: &mut String, bytes: &[u8]) {
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
}

impl Reporter {
    /// An empty report.
    pub fn new() -> Self {
        Self::default()
    }

    /// The report's text.
    pub fn finish(self) -> String {
        self.out
    }

    fn enter(&mut self, name: &str) -> usize {
        let mark = self.path.len();
        if !self.path.is_empty() {
            self.path.push('.');
        }
        self.path.push_str(name);
        mark
    }

    fn line(&mut self, name: &str, value: impl FnOnce(&mut String)) {
        let mark = self.enter(name);
        self.out.push_str(&self.path);
        self.out.push('=');
        value(&mut self.out);
        self.out.push('\n');
        self.path.truncate(mark);
    }

    /// A scalar member.
    pub fn leaf<V: ReportValue>(&mut self, name: &str, v: &V) {
        self.line(name, |o| v.render(o));
    }

    /// An optional scalar member (`= null`).
    pub fn optional<V: ReportValue>(&mut self, name: &str, v: Option<V>) {
        match v {
            Some(v) => self.line(name, |o| v.render(o)),
            None => self.line(name, |o| o.push_str("none")),
        }
    }

    /// A string member.
    pub fn text(&mut self, name: &str, v: Option<&str>) {
        match v {
            Some(s) => self.line(name, |o| {
                o.push_str("str:");
                hex(o, s.as_bytes());
            }),
            None => self.line(name, |o| o.push_str("none")),
        }
    }

    /// A byte vector member.
    pub fn bytes(&mut self, name: &str, v: Option<&[u8]>) {
        match v {
            Some(b) => self.line(name, |o| {
                o.push_str("bytes:");
                hex(o, b);
            }),
            None => self.line(name, |o| o.push_str("none")),
        }
    }

    /// An enum member.
    pub fn enumeration(&mut self, name: &str, raw: u64, declared: Option<&str>) {
        self.line(name, |o| enum_name(o, raw, declared));
    }

    /// An optional enum member (`= null`).
    pub fn optional_enum(&mut self, name: &str, v: Option<(u64, Option<&str>)>) {
        match v {
            Some((raw, declared)) => self.enumeration(name, raw, declared),
            None => self.line(name, |o| o.push_str("none")),
        }
    }

    /// A table or struct member.
    pub fn child<T: ReportFields>(&mut self, name: &str, v: Option<&T>) {
        match v {
            Some(t) => {
                let mark = self.enter(name);
                t.report(self);
                self.path.truncate(mark);
            }
            None => self.line(name, |o| o.push_str("none")),
        }
    }

    /// A union member holding `variant`.
    pub fn variant<T: ReportFields>(&mut self, name: &str, variant: &str, v: Option<&T>) {
        self.line(name, |o| o.push_str(variant));
        if let Some(t) = v {
            let mark = self.enter(name);
            t.report(self);
            self.path.truncate(mark);
        }
    }

    /// A union member whose discriminant the schema does not declare (or NONE).
    pub fn unknown_variant(&mut self, name: &str, tag: u8) {
        self.line(name, |o| {
            let _ = write!(o, "?{tag}");
        });
    }

    /// A vector rendered on one line as `[a,b,c]`, each element by `render`.
    fn list<T>(
        &mut self,
        name: &str,
        v: Option<impl Iterator<Item = T>>,
        mut render: impl FnMut(&mut String, T),
    ) {
        match v {
            Some(it) => self.line(name, |o| {
                o.push('[');
                for (i, e) in it.enumerate() {
                    if i > 0 {
                        o.push(',');
                    }
                    render(o, e);
                }
                o.push(']');
            }),
            None => self.line(name, |o| o.push_str("none")),
        }
    }

    /// A vector of scalars.
    pub fn scalars<V: ReportValue>(&mut self, name: &str, v: Option<impl Iterator<Item = V>>) {
        self.list(name, v, |o, e| e.render(o));
    }

    /// A vector of strings.
    pub fn texts<'s>(&mut self, name: &str, v: Option<impl Iterator<Item = &'s str>>) {
        self.list(name, v, |o, e| {
            o.push_str("str:");
            hex(o, e.as_bytes());
        });
    }

    /// A vector of enum values.
    pub fn enumerations<'s>(
        &mut self,
        name: &str,
        v: Option<impl Iterator<Item = (u64, Option<&'s str>)>>,
    ) {
        self.list(name, v, |o, (raw, declared)| enum_name(o, raw, declared));
    }

    /// A vector of tables or structs.
    pub fn children<T: ReportFields>(&mut self, name: &str, v: Option<impl Iterator<Item = T>>) {
        match v {
            Some(it) => {
                let mut n = 0usize;
                for (i, e) in it.enumerate() {
                    let mark = self.enter(name);
                    let _ = write!(self.path, "[{i}]");
                    e.report(self);
                    self.path.truncate(mark);
                    n = i + 1;
                }
                self.line(name, |o| {
                    let _ = write!(o, "len:{n}");
                });
            }
            None => self.line(name, |o| o.push_str("none")),
        }
    }
}

#[allow(clippy::all)]
mod generated {
    use super::{ReportFields, Reporter};
    use crate::schema::*;
    include!("generated/reports.rs");
}
