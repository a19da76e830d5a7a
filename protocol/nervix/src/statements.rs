//! NSPL statements as the client must route them (L-1 to L-3, A-1, RS-1).
//!
//! The client does not parse NSPL; it splits a query into statements (outside quoted text,
//! quoted names and comments, keywords in any case) and recognises the leading words that
//! decide how a statement travels, following the server release's statement grammar:
//!
//! | statement | what the client does |
//! |---|---|
//! | `USE <domain>` | selects the domain locally (L-1); sends nothing |
//! | `LIST DOMAINS` | a `ListDomainsRequest` |
//! | `ATTACH DOMAIN CLOCK` / `DETACH DOMAIN CLOCK` | a clock request for the selected domain |
//! | `CREATE SUBSCRIPTION ...` | a `SubscribeRequest` with the exact statement text |
//! | `DELETE SUBSCRIPTION <name>` | an `UnsubscribeRequest` |
//! | `UPLOAD RESOURCE ...` | its own resource upload call |
//! | `RESTORE ...` | its own restore call; refused inside a transaction |
//! | `DESCRIBE BACKUP ...` | refused: it reads an archive on the client's machine |
//! | `BACKUP ...` | a `CommandRequest` on its own |
//! | anything else | a `CommandRequest` |
//!
//! A `CommandRequest` holds one statement, or several only while a transaction is held;
//! `DESCRIBE TRANSACTION`, `SHOW TRANSACTIONS` and `BACKUP` always travel alone, and a query
//! that mixes a separately routed statement with others is refused, naming it.

/// What a statement is, as far as routing goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatementKind {
    /// `BEGIN`: opens a transaction.
    Begin,
    /// `COMMIT`.
    Commit,
    /// `REVERT` (or `ROLLBACK`).
    Revert,
    /// `DESCRIBE TRANSACTION`.
    DescribeTransaction,
    /// `SHOW TRANSACTIONS`.
    ShowTransactions,
    /// `BACKUP`.
    Backup,
    /// A read (`SHOW ...`, `DESCRIBE ...`): changes nothing.
    Read,
    /// A statement the client serves itself or sends as a request or call of its own.
    Routed(RoutedRequest),
    /// Anything else: a statement that can change state.
    Other,
}

/// How a statement that is not a command travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RoutedRequest {
    /// `USE <domain>`: selected locally, nothing is sent.
    UseDomain,
    /// `LIST DOMAINS`: a `ListDomainsRequest`.
    ListDomains,
    /// `ATTACH DOMAIN CLOCK`: an `AttachDomainClockRequest`.
    AttachDomainClock,
    /// `DETACH DOMAIN CLOCK`: a `DetachDomainClockRequest`.
    DetachDomainClock,
    /// `CREATE SUBSCRIPTION`: a `SubscribeRequest`.
    Subscribe,
    /// `DELETE SUBSCRIPTION`: an `UnsubscribeRequest`.
    Unsubscribe,
    /// `UPLOAD RESOURCE`: the resource upload call.
    UploadResource,
    /// `RESTORE`: the restore call.
    Restore,
    /// `DESCRIBE BACKUP`: not a protocol request at all (it reads a local archive).
    DescribeBackup,
}

/// Why a query cannot be sent as the client was asked to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatementError {
    /// The query holds no statement.
    #[error("the query holds no statement")]
    Empty,
    /// A statement that travels as a request of its own was combined with others (L-2).
    #[error("`{statement}` is sent as {request:?} on its own, not inside a command")]
    NeedsOwnRequest {
        /// The statement's leading words.
        statement: String,
        /// How it travels.
        request: RoutedRequest,
    },
    /// Several statements in one command outside a transaction (L-2).
    #[error("several statements in one command are only allowed while a transaction is held")]
    SeveralOutsideTransaction,
    /// A statement that must travel alone was combined with others (L-2, A-1).
    #[error("`{statement}` must be sent on its own")]
    MustTravelAlone {
        /// The statement's leading words.
        statement: String,
    },
    /// A statement no request carries: the client cannot serve it.
    #[error("`{statement}` is not a protocol request")]
    NotARequest {
        /// The statement's leading words.
        statement: String,
    },
    /// A statement the client serves itself does not have its form.
    #[error("`{statement}` does not have the form {expected}")]
    Malformed {
        /// The statement's leading words.
        statement: String,
        /// The form it must have.
        expected: &'static str,
    },
    /// A quote or comment is not closed.
    #[error("a quote or comment is not closed")]
    Unterminated,
}

/// A query checked for sending as one `CommandRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandShape {
    /// The kind of each statement, in written order; never empty.
    kinds: Kinds,
}

/// The kinds of a command's statements: one (every command outside a transaction) is kept
/// without a heap allocation; several only as `Many`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kinds {
    One(StatementKind),
    Many(Vec<StatementKind>),
}

impl CommandShape {
    /// The kind of each statement, in written order.
    pub fn kinds(&self) -> &[StatementKind] {
        match &self.kinds {
            Kinds::One(k) => std::slice::from_ref(k),
            Kinds::Many(v) => v,
        }
    }
    /// The first statement's kind.
    pub fn first(&self) -> StatementKind {
        self.kinds()
            .first()
            .copied()
            .unwrap_or(StatementKind::Other)
    }
    /// Whether every statement only reads.
    pub fn is_read(&self) -> bool {
        self.kinds().iter().all(|k| {
            matches!(
                k,
                StatementKind::Read
                    | StatementKind::DescribeTransaction
                    | StatementKind::ShowTransactions
            )
        })
    }
}

/// Where a whole query goes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Route<'q> {
    /// One `CommandRequest` carrying the query.
    Command(CommandShape),
    /// `USE <domain>`: the domain to select.
    UseDomain(String),
    /// `LIST DOMAINS`.
    ListDomains,
    /// `ATTACH DOMAIN CLOCK`.
    AttachDomainClock,
    /// `DETACH DOMAIN CLOCK`.
    DetachDomainClock,
    /// `CREATE SUBSCRIPTION ...`: the statement, exactly as written.
    Subscribe(&'q str),
    /// `DELETE SUBSCRIPTION <name>`: the subscription's name.
    Unsubscribe(String),
    /// `UPLOAD RESOURCE ...`: the statement, exactly as written.
    UploadResource(&'q str),
    /// `RESTORE ...`: the statement, exactly as written.
    Restore(&'q str),
}

/// Splits `query` into statements at `;` outside single-quoted text, double-quoted names,
/// `--` line comments and `/* */` block comments. Empty statements are dropped.
pub fn split(query: &str) -> Result<Vec<&str>, StatementError> {
    let mut out = Vec::new();
    split_each(query, |s| out.push(s))?;
    Ok(out)
}

/// [`split`], handing each statement to `each` as it is found instead of collecting them. On
/// an unterminated quote or comment some statements may have been handed out already.
fn split_each<'q>(query: &'q str, mut each: impl FnMut(&'q str)) -> Result<(), StatementError> {
    let b = query.as_bytes();
    let (mut i, mut start) = (0, 0);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => i = skip_quoted(b, i, q)?,
            b'-' if b.get(i + 1) == Some(&b'-') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                loop {
                    if i + 1 >= b.len() {
                        return Err(StatementError::Unterminated);
                    }
                    if b[i] == b'*' && b[i + 1] == b'/' {
                        break;
                    }
                    i += 1;
                }
                i += 2;
            }
            b';' => {
                push(&mut each, &query[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    push(&mut each, &query[start..]);
    Ok(())
}

/// The index just past the quoted text that opens at `i` with quote `q` (a doubled quote
/// stands for itself).
fn skip_quoted(b: &[u8], mut i: usize, q: u8) -> Result<usize, StatementError> {
    i += 1;
    loop {
        match b.get(i) {
            None => return Err(StatementError::Unterminated),
            Some(&c) if c == q && b.get(i + 1) == Some(&q) => i += 2,
            Some(&c) if c == q => return Ok(i + 1),
            Some(_) => i += 1,
        }
    }
}

fn push<'a>(each: &mut impl FnMut(&'a str), s: &'a str) {
    if !skip_blank(s).is_empty() {
        each(s.trim());
    }
}

/// `s` without the white space and comments it starts with.
fn skip_blank(s: &str) -> &str {
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            return rest;
        }
    }
}

/// The next bare word of `s` (after blanks and comments), as written (ASCII letters, digits
/// and `_` only), and what follows it.
fn next_word(s: &str) -> Option<(&str, &str)> {
    let rest = skip_blank(s);
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| (&rest[..end], &rest[end..]))
}

/// The first `n` words of a statement, upper-cased, skipping comments.
fn leading_words(s: &str, n: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = s;
    while words.len() < n {
        let Some((w, r)) = next_word(rest) else {
            break;
        };
        words.push(w.to_ascii_uppercase());
        rest = r;
    }
    words
}

/// `s` after its first `n` words.
fn after_words(s: &str, n: usize) -> &str {
    let mut rest = s;
    for _ in 0..n {
        match next_word(rest) {
            Some((_, r)) => rest = r,
            None => break,
        }
    }
    rest
}

/// One name: a bare word (letters, digits, `_`, `-`, `.`) or a double-quoted name, and nothing
/// after it but blanks and comments.
fn single_name(rest: &str) -> Option<String> {
    let rest = skip_blank(rest);
    let (name, tail) = if rest.starts_with('"') {
        let end = skip_quoted(rest.as_bytes(), 0, b'"').ok()?;
        (rest[1..end - 1].replace("\"\"", "\""), &rest[end..])
    } else {
        let end = rest
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.')))
            .unwrap_or(rest.len());
        (rest[..end].to_string(), &rest[end..])
    };
    (!name.is_empty() && skip_blank(tail).is_empty()).then_some(name)
}

/// The words of a statement, each upper-cased into a buffer of the caller's as it is read.
struct Words<'a>(&'a str);

impl Words<'_> {
    /// The next bare word, upper-cased into `buf`; empty past the last word, and for a word
    /// longer than every keyword (which no keyword can equal).
    fn next<'b>(&mut self, buf: &'b mut [u8; 12]) -> &'b [u8] {
        let Some((w, rest)) = next_word(self.0) else {
            return &[];
        };
        self.0 = rest;
        let Some(b) = buf.get_mut(..w.len()) else {
            return &[];
        };
        b.copy_from_slice(w.as_bytes());
        b.make_ascii_uppercase();
        b
    }
}

/// The routing kind of one statement.
pub fn classify(statement: &str) -> StatementKind {
    use RoutedRequest as R;
    use StatementKind as K;
    // Only as many words as the first one calls for are read.
    let mut words = Words(statement);
    let (mut first, mut second, mut third) = ([0u8; 12], [0u8; 12], [0u8; 12]);
    let first = words.next(&mut first);
    match first {
        b"BEGIN" => K::Begin,
        b"COMMIT" => K::Commit,
        b"REVERT" | b"ROLLBACK" => K::Revert,
        b"BACKUP" => K::Backup,
        b"USE" => K::Routed(R::UseDomain),
        b"RESTORE" => K::Routed(R::Restore),
        b"DESCRIBE" => match words.next(&mut second) {
            b"TRANSACTION" => K::DescribeTransaction,
            b"BACKUP" => K::Routed(R::DescribeBackup),
            _ => K::Read,
        },
        b"SHOW" => match words.next(&mut second) {
            b"TRANSACTIONS" => K::ShowTransactions,
            _ => K::Read,
        },
        b"LIST" => match words.next(&mut second) {
            b"DOMAINS" => K::Routed(R::ListDomains),
            _ => K::Other,
        },
        b"ATTACH" | b"DETACH" => match (words.next(&mut second), words.next(&mut third)) {
            (b"DOMAIN", b"CLOCK") if first == b"ATTACH" => K::Routed(R::AttachDomainClock),
            (b"DOMAIN", b"CLOCK") => K::Routed(R::DetachDomainClock),
            _ => K::Other,
        },
        b"CREATE" | b"DELETE" => match words.next(&mut second) {
            b"SUBSCRIPTION" if first == b"CREATE" => K::Routed(R::Subscribe),
            b"SUBSCRIPTION" => K::Routed(R::Unsubscribe),
            _ => K::Other,
        },
        b"UPLOAD" => match words.next(&mut second) {
            b"RESOURCE" => K::Routed(R::UploadResource),
            _ => K::Other,
        },
        _ => K::Other,
    }
}

/// Decides where `query` goes (L-2), given whether the session holds a transaction. The
/// transaction rules of L-3 on subscriptions, clocks and the selected domain are the
/// client's to apply; this checks the statements alone.
pub fn route(query: &str, holding_transaction: bool) -> Result<Route<'_>, StatementError> {
    // One statement (the usual query) is routed without collecting anything.
    let (mut first, mut count) = (None, 0usize);
    split_each(query, |s| {
        first.get_or_insert(s);
        count += 1;
    })?;
    let Some(first) = first else {
        return Err(StatementError::Empty);
    };
    if count > 1 {
        return route_several(&split(query)?, holding_transaction);
    }
    route_one(first)
}

/// [`route`] of a query of several statements.
fn route_several<'q>(
    statements: &[&'q str],
    holding_transaction: bool,
) -> Result<Route<'q>, StatementError> {
    let kinds: Vec<StatementKind> = statements.iter().map(|s| classify(s)).collect();
    for (s, k) in statements.iter().zip(&kinds) {
        if let StatementKind::Routed(request) = k {
            return Err(StatementError::NeedsOwnRequest {
                statement: leading_words(s, 3).join(" "),
                request: *request,
            });
        }
    }
    for (s, k) in statements.iter().zip(&kinds) {
        if matches!(
            k,
            StatementKind::DescribeTransaction
                | StatementKind::ShowTransactions
                | StatementKind::Backup
        ) {
            return Err(StatementError::MustTravelAlone {
                statement: leading_words(s, 2).join(" "),
            });
        }
    }
    if !holding_transaction {
        return Err(StatementError::SeveralOutsideTransaction);
    }
    Ok(Route::Command(CommandShape {
        kinds: Kinds::Many(kinds),
    }))
}

/// [`route`] of a query of one statement, `first`.
fn route_one(first: &str) -> Result<Route<'_>, StatementError> {
    let kind = classify(first);
    let malformed = |expected| StatementError::Malformed {
        statement: leading_words(first, 3).join(" "),
        expected,
    };
    let bare = |n| skip_blank(after_words(first, n)).is_empty();
    Ok(match kind {
        StatementKind::Routed(r) => match r {
            RoutedRequest::UseDomain => Route::UseDomain(
                single_name(after_words(first, 1)).ok_or_else(|| malformed("USE <domain>"))?,
            ),
            RoutedRequest::ListDomains if bare(2) => Route::ListDomains,
            RoutedRequest::ListDomains => return Err(malformed("LIST DOMAINS")),
            RoutedRequest::AttachDomainClock if bare(3) => Route::AttachDomainClock,
            RoutedRequest::AttachDomainClock => return Err(malformed("ATTACH DOMAIN CLOCK")),
            RoutedRequest::DetachDomainClock if bare(3) => Route::DetachDomainClock,
            RoutedRequest::DetachDomainClock => return Err(malformed("DETACH DOMAIN CLOCK")),
            RoutedRequest::Subscribe => Route::Subscribe(first),
            RoutedRequest::Unsubscribe => Route::Unsubscribe(
                single_name(after_words(first, 2))
                    .ok_or_else(|| malformed("DELETE SUBSCRIPTION <name>"))?,
            ),
            RoutedRequest::UploadResource => Route::UploadResource(first),
            RoutedRequest::Restore => Route::Restore(first),
            RoutedRequest::DescribeBackup => {
                return Err(StatementError::NotARequest {
                    statement: leading_words(first, 2).join(" "),
                })
            }
        },
        k => Route::Command(CommandShape {
            kinds: Kinds::One(k),
        }),
    })
}

/// Checks that `query` may travel as one `CommandRequest` (L-2), given whether the session
/// holds a transaction. A statement routed any other way is refused, naming how it travels.
pub fn check_command(
    query: &str,
    holding_transaction: bool,
) -> Result<CommandShape, StatementError> {
    match route(query, holding_transaction)? {
        Route::Command(shape) => Ok(shape),
        _ => {
            let first = split(query)?.first().copied().unwrap_or_default();
            let StatementKind::Routed(request) = classify(first) else {
                return Err(StatementError::Empty);
            };
            Err(StatementError::NeedsOwnRequest {
                statement: leading_words(first, 3).join(" "),
                request,
            })
        }
    }
}
