//! A reader for the subset of the FlatBuffers schema language that `schema/` uses, keeping the
//! constraint marks of doc comments. The generator (`emit`) turns this model into checks, reports and
//! generators; flatc remains the source of the wire code itself.

use std::collections::BTreeMap;

/// A value constraint read from a `[mark]` at the end of a field's doc comment.
#[derive(Clone, Debug, PartialEq)]
pub enum Mark {
    Present,
    NonZero,
    NonEmpty,
    Len(u64),
    Range(u64, u64),
    Max(u64),
    Ge(String),
    Le(String),
    PositiveFinite,
}

#[derive(Clone, Debug)]
pub enum Ty {
    /// bool, byte, ubyte, short, ushort, int, uint, long, ulong, float, double
    Scalar(String),
    String,
    /// A table, struct, enum or union, resolved through `Schema::kind`.
    Named(String),
    Vector(Box<Ty>),
}

#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub ty: Ty,
    pub required: bool,
    /// Declared `= null`.
    pub optional: bool,
    pub marks: Vec<Mark>,
}

#[derive(Clone, Debug)]
pub struct Table {
    pub name: String,
    pub fields: Vec<Field>,
}

#[derive(Clone, Debug)]
pub struct Enum {
    pub name: String,
    /// Declared values, in order (flatc numbers them from zero).
    #[allow(dead_code)]
    pub values: Vec<String>,
}

#[derive(Clone, Debug)]
pub struct Union {
    pub name: String,
    pub variants: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Table,
    Struct,
    Enum,
    Union,
}

#[derive(Default, Debug)]
pub struct Schema {
    pub tables: Vec<Table>,
    pub structs: Vec<Table>,
    pub enums: Vec<Enum>,
    pub unions: Vec<Union>,
    pub kinds: BTreeMap<String, Kind>,
    pub root_type: Option<String>,
    pub file_identifier: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Punct(char),
}

struct Lexed {
    tok: Tok,
    doc: Option<String>,
}

fn lex(src: &str) -> Vec<Lexed> {
    let mut out = Vec::new();
    let mut doc: Option<String> = None;
    for line in src.lines() {
        let trimmed = line.trim_start();
        if let Some(rest) = trimmed.strip_prefix("///") {
            let d = doc.get_or_insert_with(String::new);
            d.push_str(rest.trim());
            d.push(' ');
            continue;
        }
        let code = match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        };
        let chars: Vec<char> = code.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_whitespace() {
                i += 1;
            } else if c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-' {
                let start = i;
                while i < chars.len()
                    && (chars[i].is_ascii_alphanumeric() || "_.-".contains(chars[i]))
                {
                    i += 1;
                }
                let s: String = chars[start..i].iter().collect();
                out.push(Lexed {
                    tok: Tok::Ident(s),
                    doc: doc.take(),
                });
            } else if c == '"' {
                let start = i + 1;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += 1;
                }
                let s: String = chars[start..i].iter().collect();
                i += 1;
                out.push(Lexed {
                    tok: Tok::Str(s),
                    doc: doc.take(),
                });
            } else if "{}()[]:;,=".contains(c) {
                out.push(Lexed {
                    tok: Tok::Punct(c),
                    doc: doc.take(),
                });
                i += 1;
            } else {
                panic!("schema: unexpected character {c:?} in line {line:?}");
            }
        }
    }
    out
}

fn marks_of(doc: &Option<String>, ctx: &str) -> Vec<Mark> {
    let mut marks = Vec::new();
    let Some(doc) = doc else { return marks };
    let mut rest = doc.as_str();
    while let Some(open) = rest.find('[') {
        let close = rest[open..].find(']').map(|c| open + c).unwrap_or_else(|| {
            panic!("schema: unclosed constraint mark in the doc comment of {ctx}")
        });
        let body = &rest[open + 1..close];
        let (key, val) = match body.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (body, None),
        };
        let num = |v: Option<&str>| -> u64 {
            v.and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("schema: mark [{body}] of {ctx} needs a number"))
        };
        marks.push(match key {
            "present" => Mark::Present,
            "nonzero" => Mark::NonZero,
            "nonempty" => Mark::NonEmpty,
            "positive_finite" => Mark::PositiveFinite,
            "len" => Mark::Len(num(val)),
            "max" => Mark::Max(num(val)),
            "ge" => Mark::Ge(val.expect("ge needs a field").to_string()),
            "le" => Mark::Le(val.expect("le needs a field").to_string()),
            "range" => {
                let (a, b) = val
                    .and_then(|v| v.split_once(".."))
                    .unwrap_or_else(|| panic!("schema: mark [{body}] of {ctx} needs A..B"));
                Mark::Range(num(Some(a)), num(Some(b)))
            }
            other => panic!("schema: unknown constraint mark [{other}] on {ctx}"),
        });
        rest = &rest[close + 1..];
    }
    marks
}

struct Parser {
    toks: Vec<Lexed>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|l| &l.tok)
    }
    fn next(&mut self) -> &Lexed {
        let l = &self.toks[self.pos];
        self.pos += 1;
        l
    }
    fn ident(&mut self) -> String {
        match &self.next().tok {
            Tok::Ident(s) => s.clone(),
            t => panic!("schema: expected a name, found {t:?}"),
        }
    }
    fn expect(&mut self, c: char) {
        match &self.next().tok {
            Tok::Punct(p) if *p == c => {}
            t => panic!("schema: expected {c:?}, found {t:?}"),
        }
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(&Tok::Punct(c)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn ty(&mut self) -> Ty {
        if self.eat('[') {
            let inner = self.ty();
            self.expect(']');
            return Ty::Vector(Box::new(inner));
        }
        let name = self.ident();
        match name.as_str() {
            "bool" | "byte" | "ubyte" | "short" | "ushort" | "int" | "uint" | "long" | "ulong"
            | "float" | "double" => Ty::Scalar(name),
            "string" => Ty::String,
            _ => Ty::Named(name),
        }
    }
    fn fields(&mut self, owner: &str) -> Vec<Field> {
        let mut fields = Vec::new();
        self.expect('{');
        while !self.eat('}') {
            let doc = self.toks[self.pos].doc.clone();
            let name = self.ident();
            self.expect(':');
            let ty = self.ty();
            let mut optional = false;
            if self.eat('=') {
                let v = self.ident();
                optional = v == "null";
            }
            let mut required = false;
            if self.eat('(') {
                while !self.eat(')') {
                    let attr = self.ident();
                    required |= attr == "required";
                    self.eat(',');
                }
            }
            self.expect(';');
            let marks = marks_of(&doc, &format!("{owner}.{name}"));
            if marks.contains(&Mark::Present) && !optional {
                panic!("schema: [present] on {owner}.{name}, which is not `= null`");
            }
            fields.push(Field {
                name,
                ty,
                required,
                optional,
                marks,
            });
        }
        fields
    }
    fn list(&mut self) -> Vec<String> {
        let mut items = Vec::new();
        self.expect('{');
        while !self.eat('}') {
            items.push(self.ident());
            if self.eat('=') {
                panic!("schema: explicit enum values are not supported here");
            }
            self.eat(',');
        }
        items
    }
}

pub fn parse(src: &str) -> Schema {
    let mut p = Parser {
        toks: lex(src),
        pos: 0,
    };
    let mut s = Schema::default();
    while p.peek().is_some() {
        let kw = p.ident();
        match kw.as_str() {
            "namespace" | "include" | "file_extension" => {
                while !p.eat(';') {
                    p.next();
                }
            }
            "root_type" => {
                s.root_type = Some(p.ident());
                p.expect(';');
            }
            "file_identifier" => {
                if let Tok::Str(id) = &p.next().tok {
                    s.file_identifier = Some(id.clone());
                }
                p.expect(';');
            }
            "table" | "struct" => {
                let name = p.ident();
                let fields = p.fields(&name);
                let t = Table {
                    name: name.clone(),
                    fields,
                };
                if kw == "table" {
                    s.kinds.insert(name, Kind::Table);
                    s.tables.push(t);
                } else {
                    s.kinds.insert(name, Kind::Struct);
                    s.structs.push(t);
                }
            }
            "enum" => {
                let name = p.ident();
                p.expect(':');
                let _underlying = p.ident();
                let values = p.list();
                s.kinds.insert(name.clone(), Kind::Enum);
                s.enums.push(Enum { name, values });
            }
            "union" => {
                let name = p.ident();
                let variants = p.list();
                s.kinds.insert(name.clone(), Kind::Union);
                s.unions.push(Union { name, variants });
            }
            other => panic!("schema: unexpected declaration {other:?}"),
        }
    }
    s
}

impl Schema {
    pub fn kind(&self, name: &str) -> Kind {
        *self
            .kinds
            .get(name)
            .unwrap_or_else(|| panic!("schema: unknown type {name}"))
    }
    pub fn union(&self, name: &str) -> &Union {
        self.unions.iter().find(|u| u.name == name).expect("union")
    }
}

/// The method-name form flatc gives a type name (`U8Cell` -> `u8_cell`).
pub fn snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut s = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if i == 0 {
            s.push(c.to_ascii_lowercase());
        } else if c == '_' {
            s.push('_');
        } else if !c.is_ascii_lowercase() {
            let prev = chars[i - 1];
            if prev.is_ascii_lowercase() || (prev.is_ascii_digit() && !c.is_ascii_digit()) {
                s.push('_');
            }
            s.push(c.to_ascii_lowercase());
        } else {
            s.push(c);
        }
    }
    s
}
