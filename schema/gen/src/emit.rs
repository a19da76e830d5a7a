//! Emits Rust from the schema model: semantic checks for received frames (views) and for frames
//! about to be sent (owned values), a line-oriented report of what a view holds, and value
//! generators for property tests and fuzzing. Every piece follows the schema, so a member added
//! to `schema/session.fbs` is checked, reported and generated without hand-written code.

use crate::model::{snake, Field, Kind, Mark, Schema, Table, Ty};
use std::collections::BTreeMap;
use std::fmt::Write;

fn rust_scalar(s: &str) -> &'static str {
    match s {
        "bool" => "bool",
        "byte" => "i8",
        "ubyte" => "u8",
        "short" => "i16",
        "ushort" => "u16",
        "int" => "i32",
        "uint" => "u32",
        "long" => "i64",
        "ulong" => "u64",
        "float" => "f32",
        "double" => "f64",
        other => panic!("not a scalar: {other}"),
    }
}

/// Which tables and structs have anything to check when read.
pub fn read_needs(s: &Schema) -> BTreeMap<String, bool> {
    let mut needs: BTreeMap<String, bool> = BTreeMap::new();
    for t in s.tables.iter().chain(s.structs.iter()) {
        needs.insert(t.name.clone(), false);
    }
    loop {
        let mut changed = false;
        for t in s.tables.iter().chain(s.structs.iter()) {
            if needs[&t.name] {
                continue;
            }
            let n = t.fields.iter().any(|f| field_needs(s, f, &needs));
            if n {
                needs.insert(t.name.clone(), true);
                changed = true;
            }
        }
        if !changed {
            return needs;
        }
    }
}

fn field_needs(s: &Schema, f: &Field, needs: &BTreeMap<String, bool>) -> bool {
    if !f.marks.is_empty() {
        return true;
    }
    match &f.ty {
        Ty::Scalar(_) | Ty::String => false,
        Ty::Vector(_) => true,
        Ty::Named(n) => match s.kind(n) {
            Kind::Enum | Kind::Union => true,
            Kind::Table | Kind::Struct => needs[n],
        },
    }
}

fn value_checks(
    out: &mut String,
    v: &str,
    ty: &str,
    f: &Field,
    owner: &str,
    sib: &dyn Fn(&str) -> String,
) {
    let site = format!("\"{owner}\", \"{}\"", f.name);
    for m in &f.marks {
        match m {
            Mark::Range(a, b) => writeln!(
                out,
                "if ({v} as u64) < {a} || ({v} as u64) > {b} {{ fail!({site}, Fault::OutOfRange {{ value: {v} as u64, min: {a}, max: {b} }}); }}"
            )
            .unwrap(),
            Mark::Max(n) => writeln!(
                out,
                "if ({v} as u64) > {n} {{ fail!({site}, Fault::OutOfRange {{ value: {v} as u64, min: 0, max: {n} }}); }}"
            )
            .unwrap(),
            _ => {}
        }
    }
    for m in &f.marks {
        match m {
            Mark::NonZero => writeln!(out, "if {v} == 0 {{ fail!({site}, Fault::Zero); }}").unwrap(),
            Mark::Ge(o) => writeln!(
                out,
                "if {v} < {} {{ fail!({site}, Fault::Order {{ other: \"{o}\", must_be: \"at least\" }}); }}",
                sib(o)
            )
            .unwrap(),
            Mark::Le(o) => writeln!(
                out,
                "if {v} > {} {{ fail!({site}, Fault::Order {{ other: \"{o}\", must_be: \"at most\" }}); }}",
                sib(o)
            )
            .unwrap(),
            Mark::PositiveFinite => {
                assert!(ty == "f64" || ty == "f32");
                writeln!(out, "if !({v}.is_finite() && {v} > 0.0) {{ fail!({site}, Fault::NotPositiveFinite); }}").unwrap()
            }
            _ => {}
        }
    }
}

/// The length checks of a vector member. The entry limit is a send limit (F-6) and applies only
/// when `send`; a received vector is bounded by verification and the frame limit alone (F-3).
fn len_checks(out: &mut String, len: &str, f: &Field, owner: &str, send: bool) {
    let site = format!("\"{owner}\", \"{}\"", f.name);
    if send {
        writeln!(out, "if {len} > crate::limits::MAX_VECTOR_ENTRIES {{ fail!({site}, Fault::TooManyEntries {{ len: {len} }}); }}").unwrap();
    }
    for m in &f.marks {
        match m {
            Mark::NonEmpty => writeln!(out, "if {len} == 0 {{ fail!({site}, Fault::Empty); }}").unwrap(),
            Mark::Len(n) => writeln!(
                out,
                "if {len} != {n} {{ fail!({site}, Fault::Length {{ expected: {n}, found: {len} }}); }}"
            )
            .unwrap(),
            _ => {}
        }
    }
}

/// The checks of a scalar member read through `acc`, an `Option` when it is `= null`.
fn scalar_member(
    out: &mut String,
    f: &Field,
    owner: &str,
    site: &str,
    acc: &str,
    sib: &dyn Fn(&str) -> String,
    ty: &str,
) {
    if !f.optional {
        writeln!(out, "let v = {acc};").unwrap();
        value_checks(out, "v", ty, f, owner, sib);
    } else if f.marks.contains(&Mark::Present) {
        writeln!(
            out,
            "let Some(v) = {acc} else {{ fail!({site}, Fault::Absent); }};"
        )
        .unwrap();
        value_checks(out, "v", ty, f, owner, sib);
    } else {
        writeln!(out, "if let Some(v) = {acc} {{").unwrap();
        value_checks(out, "v", ty, f, owner, sib);
        writeln!(out, "}}").unwrap();
    }
}

/// The check that every element of an enum vector `v` is declared.
fn enum_elements(out: &mut String, site: &str) {
    writeln!(
        out,
        "for e in v.iter() {{ if e.variant_name().is_none() {{ fail!({site}, Fault::UndeclaredEnum {{ value: e.0 as u64 }}); }} }}"
    )
    .unwrap();
}

/// The checks of an enum member read through `acc`: a declared value, present when required.
fn enum_member(out: &mut String, f: &Field, site: &str, acc: &str) {
    let check = format!(
        "if v.variant_name().is_none() {{ fail!({site}, Fault::UndeclaredEnum {{ value: v.0 as u64 }}); }}"
    );
    if !f.optional {
        writeln!(out, "let v = {acc}; {check}").unwrap();
    } else if f.marks.contains(&Mark::Present) {
        writeln!(
            out,
            "let Some(v) = {acc} else {{ fail!({site}, Fault::Absent); }}; {check}"
        )
        .unwrap();
    } else {
        writeln!(out, "if let Some(v) = {acc} {{ {check} }}").unwrap();
    }
}

// ---------------------------------------------------------------------------------------------
// Checks on received views
// ---------------------------------------------------------------------------------------------

pub fn read_checks(s: &Schema) -> String {
    let needs = read_needs(s);
    let mut out = String::new();
    for st in &s.structs {
        if !needs[&st.name] {
            continue;
        }
        writeln!(
            out,
            "#[inline]\nfn check_struct_{}(s: &{}) -> Result<(), ProtocolViolation> {{",
            snake(&st.name),
            st.name
        )
        .unwrap();
        for f in &st.fields {
            let Ty::Scalar(sc) = &f.ty else {
                panic!("struct field")
            };
            writeln!(out, "{{ let v = s.{}();", f.name).unwrap();
            value_checks(&mut out, "v", rust_scalar(sc), f, &st.name, &|o| {
                format!("s.{o}()")
            });
            writeln!(out, "}}").unwrap();
        }
        writeln!(out, "Ok(())\n}}").unwrap();
    }
    for t in &s.tables {
        writeln!(out, "impl CheckRead for {}<'_> {{", t.name).unwrap();
        writeln!(out, "const NEEDED: bool = {};", needs[&t.name]).unwrap();
        writeln!(
            out,
            "#[inline]\nfn check(&self) -> Result<(), ProtocolViolation> {{"
        )
        .unwrap();
        for f in &t.fields {
            if field_needs(s, f, &needs) {
                read_field(&mut out, s, t, f, &needs);
            }
        }
        writeln!(out, "Ok(())\n}}\n}}").unwrap();
    }
    out
}

fn read_field(out: &mut String, s: &Schema, t: &Table, f: &Field, needs: &BTreeMap<String, bool>) {
    let site = format!("\"{}\", \"{}\"", t.name, f.name);
    let acc = format!("self.{}()", f.name);
    let sib = |o: &str| format!("self.{o}()");
    writeln!(out, "{{").unwrap();
    match &f.ty {
        Ty::Scalar(sc) => scalar_member(out, f, &t.name, &site, &acc, &sib, rust_scalar(sc)),
        Ty::String => {}
        Ty::Named(n) => match s.kind(n) {
            Kind::Enum => enum_member(out, f, &site, &acc),
            Kind::Struct => {
                let fun = format!("check_struct_{}", snake(n));
                if f.required {
                    writeln!(out, "{fun}({acc})?;").unwrap();
                } else {
                    writeln!(out, "if let Some(v) = {acc} {{ {fun}(v)?; }}").unwrap();
                }
            }
            Kind::Table => {
                if f.required {
                    writeln!(out, "{acc}.check()?;").unwrap();
                } else {
                    writeln!(out, "if let Some(v) = {acc} {{ v.check()?; }}").unwrap();
                }
            }
            Kind::Union => {
                let u = s.union(n);
                writeln!(out, "match self.{}_type() {{", f.name).unwrap();
                for var in &u.variants {
                    if needs[var] {
                        writeln!(
                            out,
                            "{n}::{var} => match self.{}_as_{}() {{ Some(v) => v.check()?, None => fail!({site}, Fault::Absent) }},",
                            f.name,
                            snake(var)
                        )
                        .unwrap();
                    } else {
                        writeln!(out, "{n}::{var} => {{}}").unwrap();
                    }
                }
                if f.required {
                    writeln!(out, "{n}::NONE => fail!({site}, Fault::NoneUnion),").unwrap();
                } else {
                    writeln!(out, "{n}::NONE => {{}}").unwrap();
                }
                writeln!(
                    out,
                    "other => fail!({site}, Fault::UndeclaredUnion {{ tag: other.0 }}),\n}}"
                )
                .unwrap();
            }
        },
        Ty::Vector(inner) => {
            if f.required {
                writeln!(out, "let v = {acc};").unwrap();
            } else {
                writeln!(out, "if let Some(v) = {acc} {{").unwrap();
            }
            len_checks(out, "v.len()", f, &t.name, false);
            if let Ty::Named(n) = &**inner {
                match s.kind(n) {
                    Kind::Table if needs[n] => {
                        writeln!(out, "for e in v.iter() {{ e.check()?; }}").unwrap();
                    }
                    Kind::Struct if needs[n] => {
                        writeln!(
                            out,
                            "for e in v.iter() {{ check_struct_{}(e)?; }}",
                            snake(n)
                        )
                        .unwrap();
                    }
                    Kind::Enum => enum_elements(out, &site),
                    Kind::Union => panic!("vectors of unions are not supported"),
                    _ => {}
                }
            }
            if !f.required {
                writeln!(out, "}}").unwrap();
            }
        }
    }
    writeln!(out, "}}").unwrap();
}

// ---------------------------------------------------------------------------------------------
// Checks on owned values before they are written
// ---------------------------------------------------------------------------------------------

pub fn write_checks(s: &Schema) -> String {
    let mut out = String::new();
    for st in &s.structs {
        writeln!(out, "impl CheckWrite for {}T {{\nfn check_write(&self, _cx: &mut WriteCx) -> Result<(), EncodeError> {{", st.name).unwrap();
        for f in &st.fields {
            let Ty::Scalar(sc) = &f.ty else {
                panic!("struct field")
            };
            writeln!(out, "{{ let v = self.{};", f.name).unwrap();
            value_checks(&mut out, "v", rust_scalar(sc), f, &st.name, &|o| {
                format!("self.{o}")
            });
            writeln!(out, "}}").unwrap();
        }
        writeln!(out, "Ok(())\n}}\n}}").unwrap();
    }
    for u in &s.unions {
        writeln!(out, "impl {}T {{\npub(crate) fn check_variant(&self, cx: &mut WriteCx, table: &'static str, field: &'static str) -> Result<(), EncodeError> {{\nmatch self {{", u.name).unwrap();
        writeln!(
            out,
            "Self::NONE => Err(EncodeError::field(Site::new(table, field), Fault::NoneUnion)),"
        )
        .unwrap();
        for var in &u.variants {
            writeln!(out, "Self::{var}(v) => cx.nested(&**v, table, field),").unwrap();
        }
        writeln!(out, "}}\n}}\n}}").unwrap();
    }
    for t in &s.tables {
        writeln!(out, "impl CheckWrite for {}T {{\nfn check_write(&self, cx: &mut WriteCx) -> Result<(), EncodeError> {{", t.name).unwrap();
        writeln!(out, "let _ = &cx;").unwrap();
        for f in &t.fields {
            if matches!(f.ty, Ty::Scalar(_)) && f.marks.is_empty() {
                continue;
            }
            write_field(&mut out, s, t, f);
        }
        writeln!(out, "Ok(())\n}}\n}}").unwrap();
    }
    out
}

fn write_field(out: &mut String, s: &Schema, t: &Table, f: &Field) {
    let (tn, fname) = (&t.name, &f.name);
    let site = format!("\"{tn}\", \"{fname}\"");
    let acc = format!("self.{fname}");
    let sib = |o: &str| format!("self.{o}");
    writeln!(out, "{{").unwrap();
    match &f.ty {
        Ty::Scalar(sc) => scalar_member(out, f, tn, &site, &acc, &sib, rust_scalar(sc)),
        Ty::String => {
            if f.required {
                writeln!(out, "cx.string(&{acc}, {site})?;").unwrap();
            } else {
                writeln!(out, "if let Some(v) = &{acc} {{ cx.string(v, {site})?; }}").unwrap();
            }
        }
        Ty::Named(n) => match s.kind(n) {
            Kind::Enum => enum_member(out, f, &site, &acc),
            Kind::Struct => {
                if f.required {
                    writeln!(out, "{acc}.check_write(cx)?;").unwrap();
                } else {
                    writeln!(out, "if let Some(v) = &{acc} {{ v.check_write(cx)?; }}").unwrap();
                }
            }
            Kind::Table => {
                if f.required {
                    writeln!(out, "cx.nested(&*{acc}, {site})?;").unwrap();
                } else {
                    writeln!(
                        out,
                        "if let Some(v) = &{acc} {{ cx.nested(&**v, {site})?; }}"
                    )
                    .unwrap();
                }
            }
            Kind::Union => {
                writeln!(out, "{acc}.check_variant(cx, {site})?;").unwrap();
            }
        },
        Ty::Vector(inner) => {
            if f.required {
                writeln!(out, "let v = &{acc};").unwrap();
            } else {
                writeln!(out, "if let Some(v) = &{acc} {{").unwrap();
            }
            len_checks(out, "v.len()", f, tn, true);
            match &**inner {
                Ty::String => {
                    writeln!(out, "for e in v.iter() {{ cx.string(e, {site})?; }}").unwrap()
                }
                Ty::Scalar(sc) => writeln!(
                    out,
                    "cx.payload(v.len() * core::mem::size_of::<{}>())?;",
                    rust_scalar(sc)
                )
                .unwrap(),
                Ty::Named(n) => match s.kind(n) {
                    Kind::Table => {
                        writeln!(out, "for e in v.iter() {{ cx.nested(e, {site})?; }}").unwrap()
                    }
                    Kind::Struct => {
                        writeln!(out, "for e in v.iter() {{ e.check_write(cx)?; }}").unwrap()
                    }
                    Kind::Enum => enum_elements(out, &site),
                    Kind::Union => panic!("vectors of unions are not supported"),
                },
                _ => {}
            }
            if !f.required {
                writeln!(out, "}}").unwrap();
            }
        }
    }
    writeln!(out, "}}").unwrap();
}

// ---------------------------------------------------------------------------------------------
// Report of what a checked view holds
// ---------------------------------------------------------------------------------------------

pub fn reports(s: &Schema) -> String {
    let mut out = String::new();
    for st in &s.structs {
        writeln!(
            out,
            "impl ReportFields for {} {{\nfn report(&self, r: &mut Reporter) {{",
            st.name
        )
        .unwrap();
        for f in &st.fields {
            writeln!(out, "r.leaf(\"{}\", &self.{}());", f.name, f.name).unwrap();
        }
        writeln!(out, "}}\n}}").unwrap();
    }
    for t in &s.tables {
        writeln!(
            out,
            "impl ReportFields for {}<'_> {{\nfn report(&self, r: &mut Reporter) {{",
            t.name
        )
        .unwrap();
        if t.fields.is_empty() {
            writeln!(out, "let _ = r;").unwrap();
        }
        for f in &t.fields {
            let (name, acc) = (&f.name, format!("self.{}()", f.name));
            match &f.ty {
                Ty::Scalar(_) => {
                    if f.optional {
                        writeln!(out, "r.optional(\"{name}\", {acc});").unwrap();
                    } else {
                        writeln!(out, "r.leaf(\"{name}\", &{acc});").unwrap();
                    }
                }
                Ty::String => {
                    if f.required {
                        writeln!(out, "r.text(\"{name}\", Some({acc}));").unwrap();
                    } else {
                        writeln!(out, "r.text(\"{name}\", {acc});").unwrap();
                    }
                }
                Ty::Named(n) => {
                    match s.kind(n) {
                        Kind::Enum => {
                            if f.optional {
                                writeln!(out, "r.optional_enum(\"{name}\", {acc}.map(|v| (v.0 as u64, v.variant_name())));").unwrap();
                            } else {
                                writeln!(out, "r.enumeration(\"{name}\", {acc}.0 as u64, {acc}.variant_name());").unwrap();
                            }
                        }
                        Kind::Struct | Kind::Table => {
                            if f.required {
                                writeln!(out, "r.child(\"{name}\", Some(&{acc}));").unwrap();
                            } else {
                                writeln!(out, "r.child(\"{name}\", {acc}.as_ref());").unwrap();
                            }
                        }
                        Kind::Union => {
                            let u = s.union(n);
                            writeln!(out, "match self.{name}_type() {{").unwrap();
                            for var in &u.variants {
                                writeln!(
                                out,
                                "{n}::{var} => r.variant(\"{name}\", \"{var}\", self.{name}_as_{}().as_ref()),",
                                snake(var)
                            )
                            .unwrap();
                            }
                            writeln!(out, "other => r.unknown_variant(\"{name}\", other.0),\n}}")
                                .unwrap();
                        }
                    }
                }
                Ty::Vector(inner) => {
                    let v = if f.required {
                        format!("Some({acc})")
                    } else {
                        acc.clone()
                    };
                    match &**inner {
                        Ty::Scalar(sc) if sc == "ubyte" => {
                            writeln!(out, "r.bytes(\"{name}\", {v}.map(|v| v.bytes()));").unwrap()
                        }
                        Ty::Scalar(_) => writeln!(out, "r.scalars(\"{name}\", {v}.map(|v| v.iter()));").unwrap(),
                        Ty::String => writeln!(out, "r.texts(\"{name}\", {v}.map(|v| v.iter()));").unwrap(),
                        Ty::Named(n) => match s.kind(n) {
                            Kind::Table => writeln!(out, "r.children(\"{name}\", {v}.map(|v| v.iter()));").unwrap(),
                            Kind::Struct => writeln!(out, "r.children(\"{name}\", {v}.map(|v| v.iter()));").unwrap(),
                            Kind::Enum => writeln!(
                                out,
                                "r.enumerations(\"{name}\", {v}.map(|v| v.iter().map(|e| (e.0 as u64, e.variant_name()))));"
                            )
                            .unwrap(),
                            Kind::Union => panic!("vectors of unions are not supported"),
                        },
                        Ty::Vector(_) => panic!("nested vectors are not FlatBuffers"),
                    }
                }
            }
        }
        writeln!(out, "}}\n}}").unwrap();
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Generators of valid owned values (property tests and structured fuzzing)
// ---------------------------------------------------------------------------------------------

fn gen_scalar_expr(sc: &str) -> String {
    format!("g.{}()", rust_scalar(sc))
}

fn gen_value_fixups(out: &mut String, v: &str, ty: &str, f: &Field) {
    for m in &f.marks {
        match m {
            Mark::Range(a, b) => writeln!(
                out,
                "let {v} = ({a} + ({v} as u64) % ({b} - {a} + 1)) as {ty};"
            )
            .unwrap(),
            Mark::Max(n) => writeln!(out, "let {v} = (({v} as u64) % ({n} + 1)) as {ty};").unwrap(),
            Mark::Ge(o) => writeln!(out, "let {v} = {o}.saturating_add({v} % 1000);").unwrap(),
            Mark::Le(o) => writeln!(
                out,
                "let {v} = if {o} == {ty}::MAX {{ {v} }} else {{ {v} % ({o} + 1) }};"
            )
            .unwrap(),
            Mark::PositiveFinite => writeln!(
                out,
                "let {v} = if {v}.is_finite() && {v} > 0.0 {{ {v} }} else {{ 1.0 }};"
            )
            .unwrap(),
            _ => {}
        }
    }
    if f.marks.contains(&Mark::NonZero) {
        writeln!(out, "let {v} = if {v} == 0 {{ 1 }} else {{ {v} }};").unwrap();
    }
}

pub fn generators(s: &Schema) -> String {
    let mut out = String::new();
    for e in &s.enums {
        writeln!(out, "impl Generate for {} {{\nfn generate(g: &mut Gen) -> Self {{ Self::ENUM_VALUES[g.index(Self::ENUM_VALUES.len())] }}\n}}", e.name).unwrap();
    }
    for u in &s.unions {
        writeln!(
            out,
            "impl Generate for {}T {{\nfn generate(g: &mut Gen) -> Self {{",
            u.name
        )
        .unwrap();
        writeln!(
            out,
            "let pick = if g.at_depth_limit() {{ 0 }} else {{ g.index({}) }};\nmatch pick {{",
            u.variants.len()
        )
        .unwrap();
        for (i, var) in u.variants.iter().enumerate() {
            writeln!(
                out,
                "{i} => Self::{var}(alloc::boxed::Box::new(g.nested())),"
            )
            .unwrap();
        }
        writeln!(out, "_ => unreachable!(),\n}}\n}}\n}}").unwrap();
    }
    for t in s.structs.iter().chain(s.tables.iter()) {
        writeln!(
            out,
            "impl Generate for {}T {{\nfn generate(g: &mut Gen) -> Self {{",
            t.name
        )
        .unwrap();
        if t.fields.is_empty() {
            writeln!(out, "let _ = g;").unwrap();
        }
        for f in &t.fields {
            let v = &f.name;
            match &f.ty {
                Ty::Scalar(sc) => {
                    let ty = rust_scalar(sc);
                    writeln!(out, "let {v}: {ty} = {};", gen_scalar_expr(sc)).unwrap();
                    gen_value_fixups(&mut out, v, ty, f);
                    if f.optional {
                        if f.marks.contains(&Mark::Present) {
                            writeln!(out, "let {v} = Some({v});").unwrap();
                        } else {
                            writeln!(
                                out,
                                "let {v} = if g.bool() {{ Some({v}) }} else {{ None }};"
                            )
                            .unwrap();
                        }
                    }
                }
                Ty::String => {
                    if f.required {
                        writeln!(out, "let {v} = g.string();").unwrap();
                    } else {
                        writeln!(
                            out,
                            "let {v} = if g.bool() {{ Some(g.string()) }} else {{ None }};"
                        )
                        .unwrap();
                    }
                }
                Ty::Named(n) => {
                    let kind = s.kind(n);
                    let make = match kind {
                        Kind::Enum => format!("{n}::generate(g)"),
                        Kind::Struct => format!("{n}T::generate(g)"),
                        Kind::Table => format!("alloc::boxed::Box::new(g.nested::<{n}T>())"),
                        Kind::Union => format!("{n}T::generate(g)"),
                    };
                    if f.optional {
                        if f.marks.contains(&Mark::Present) {
                            writeln!(out, "let {v} = Some({make});").unwrap();
                        } else {
                            writeln!(
                                out,
                                "let {v} = if g.bool() {{ Some({make}) }} else {{ None }};"
                            )
                            .unwrap();
                        }
                    } else if f.required || kind == Kind::Union || kind == Kind::Enum {
                        writeln!(out, "let {v} = {make};").unwrap();
                    } else {
                        writeln!(out, "let {v} = if !g.at_depth_limit() && g.bool() {{ Some({make}) }} else {{ None }};").unwrap();
                    }
                }
                Ty::Vector(inner) => {
                    let (min, max) = f
                        .marks
                        .iter()
                        .find_map(|m| match m {
                            Mark::Len(n) => Some((*n, *n)),
                            Mark::NonEmpty => Some((1, 4)),
                            _ => None,
                        })
                        .unwrap_or((0, 4));
                    let elem = match &**inner {
                        Ty::Scalar(sc) => gen_scalar_expr(sc),
                        Ty::String => "g.string()".to_string(),
                        Ty::Named(n) => match s.kind(n) {
                            Kind::Table => format!("g.nested::<{n}T>()"),
                            Kind::Struct => format!("{n}T::generate(g)"),
                            Kind::Enum => format!("{n}::generate(g)"),
                            Kind::Union => panic!("vectors of unions"),
                        },
                        Ty::Vector(_) => panic!("nested vectors"),
                    };
                    let max = if matches!(&**inner, Ty::Scalar(sc) if sc == "ubyte") && min == 0 {
                        24
                    } else {
                        max
                    };
                    let make = format!("{{ let n = g.len({min}, {max}); (0..n).map(|_| {elem}).collect::<alloc::vec::Vec<_>>() }}");
                    if f.required {
                        writeln!(out, "let {v} = {make};").unwrap();
                    } else {
                        writeln!(
                            out,
                            "let {v} = if g.bool() {{ Some({make}) }} else {{ None }};"
                        )
                        .unwrap();
                    }
                }
            }
        }
        let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
        writeln!(out, "Self {{ {} }}\n}}\n}}", names.join(", ")).unwrap();
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Frame roots
// ---------------------------------------------------------------------------------------------

pub struct RootFile {
    pub stem: String,
    pub root: String,
    pub identifier: String,
}

pub fn roots(roots: &[RootFile]) -> String {
    let mut out = String::new();
    for r in roots {
        let id = &r.identifier;
        let root = &r.root;
        let marker = format!("{root}Root");
        writeln!(
            out,
            "/// The frame root `{root}`, file identifier `{id}`, declared in `schema/{stem}.fbs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum {marker} {{}}
impl Root for {marker} {{
    type View<'a> = {root}<'a>;
    type Owned = {root}T;
    const IDENTIFIER: [u8; 4] = *b\"{id}\";
    const NAME: &'static str = \"{root}\";
    const EXTENSION: &'static str = \"{ext}\";
    #[inline]
    fn finish(owned: &{root}T, fbb: &mut flatbuffers::FlatBufferBuilder<'_>) {{
        let root = owned.pack(fbb);
        fbb.finish(root, Some(\"{id}\"));
    }}
    fn unpack(view: &{root}<'_>) -> {root}T {{
        view.unpack()
    }}
}}",
            stem = r.stem,
            ext = id.to_ascii_lowercase(),
        )
        .unwrap();
    }
    writeln!(
        out,
        "/// Every frame root, for code that walks them all (corpus, fuzzing, reports)."
    )
    .unwrap();
    writeln!(out, "pub const ROOT_EXTENSIONS: &[(&str, &str)] = &[").unwrap();
    for r in roots {
        writeln!(
            out,
            "(\"{}\", \"{}\"),",
            r.identifier.to_ascii_lowercase(),
            r.root
        )
        .unwrap();
    }
    writeln!(out, "];").unwrap();
    out
}
