//! NSPL statements as the client must route them (L-1 to L-3, A-1, RS-1).
//!
//! The client does not parse NSPL; it splits a query into statements (outside quotes and
//! comments) and recognises the few leading keywords that decide how a statement may travel:
//!
//! | statement begins with | travels as |
//! |---|---|
//! | `USE DOMAIN` | `SelectDomainRequest` |
//! | `ATTACH TRANSACTION` | `AttachTransactionRequest` |
//! | `INSPECT TRANSACTION` | `InspectTransactionRequest` |
//! | `CREATE SUBSCRIPTION` | `SubscribeRequest` |
//! | `DROP SUBSCRIPTION` | `UnsubscribeRequest` |
//! | `ATTACH DOMAIN CLOCK` | `AttachDomainClockRequest` |
//! | `DETACH DOMAIN CLOCK` | `DetachDomainClockRequest` |
//! | `RESTORE` | its own `RestoreBackup` call |
//!
//! Sent inside a `CommandRequest` each of these is refused by the server; the client refuses
//! it first, naming the request to use. A `CommandRequest` holds one statement, or several only
//! while a transaction is held; `DESCRIBE TRANSACTION`, `SHOW TRANSACTIONS` and `BACKUP` always
//! travel alone.

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
    /// A statement that travels as a request of its own.
    Routed(RoutedRequest),
    /// Anything else: a statement that can change state.
    Other,
}

/// The request (or call) a routed statement travels as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RoutedRequest {
    /// `SelectDomainRequest`.
    SelectDomain,
    /// `AttachTransactionRequest`.
    AttachTransaction,
    /// `InspectTransactionRequest`.
    InspectTransaction,
    /// `SubscribeRequest`.
    Subscribe,
    /// `UnsubscribeRequest`.
    Unsubscribe,
    /// `AttachDomainClockRequest`.
    AttachDomainClock,
    /// `DetachDomainClockRequest`.
    DetachDomainClock,
    /// The `RestoreBackup` call.
    Restore,
}

/// Why a query cannot be sent as one `CommandRequest`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatementError {
    /// The query holds no statement.
    #[error("the query holds no statement")]
    Empty,
    /// A statement that travels as a request of its own (L-2).
    #[error("`{statement}` is sent as {request:?}, not inside a command")]
    NeedsOwnRequest {
        /// The statement's leading words.
        statement: String,
        /// The request to use.
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
    /// A quote or comment is not closed.
    #[error("a quote or comment is not closed")]
    Unterminated,
}

/// A query checked for sending as one `CommandRequest`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandShape {
    /// The kind of each statement, in written order.
    pub kinds: Vec<StatementKind>,
}

impl CommandShape {
    /// The first statement's kind.
    pub fn first(&self) -> StatementKind {
        self.kinds[0]
    }
    /// Whether every statement only reads.
    pub fn is_read(&self) -> bool {
        self.kinds.iter().all(|k| {
            matches!(
                k,
                StatementKind::Read
                    | StatementKind::DescribeTransaction
                    | StatementKind::ShowTransactions
            )
        })
    }
}

/// Splits `query` into statements at `;` outside single-quoted text, double-quoted names,
/// `--` line comments and `/* */` block comments. Empty statements are dropped.
pub fn split(query: &str) -> Result<Vec<&str>, StatementError> {
    let b = query.as_bytes();
    let mut out = Vec::new();
    let (mut i, mut start) = (0, 0);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                i += 1;
                loop {
                    if i >= b.len() {
                        return Err(StatementError::Unterminated);
                    }
                    if b[i] == q {
                        if b.get(i + 1) == Some(&q) {
                            i += 2;
                            continue;
                        }
                        break;
                    }
                    i += 1;
                }
                i += 1;
            }
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
                push(&mut out, &query[start..i]);
                i += 1;
                start = i;
            }
            _ => i += 1,
        }
    }
    push(&mut out, &query[start..]);
    Ok(out)
}

fn push<'a>(out: &mut Vec<&'a str>, s: &'a str) {
    if !is_blank(s) {
        out.push(s.trim());
    }
}

/// Whether a statement holds nothing but white space and comments.
fn is_blank(s: &str) -> bool {
    let mut rest = s;
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
        } else if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
        } else {
            return rest.is_empty();
        }
    }
}

/// The first `n` words of a statement, upper-cased, skipping comments.
fn leading_words(s: &str, n: usize) -> Vec<String> {
    let mut words = Vec::new();
    let mut rest = s;
    while words.len() < n {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("--") {
            rest = r.find('\n').map_or("", |i| &r[i..]);
            continue;
        }
        if let Some(r) = rest.strip_prefix("/*") {
            rest = r.find("*/").map_or("", |i| &r[i + 2..]);
            continue;
        }
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        words.push(rest[..end].to_ascii_uppercase());
        rest = &rest[end..];
    }
    words
}

/// The routing kind of one statement.
pub fn classify(statement: &str) -> StatementKind {
    let w = leading_words(statement, 3);
    let w: Vec<&str> = w.iter().map(String::as_str).collect();
    match w.as_slice() {
        ["BEGIN", ..] => StatementKind::Begin,
        ["COMMIT", ..] => StatementKind::Commit,
        ["REVERT", ..] | ["ROLLBACK", ..] => StatementKind::Revert,
        ["DESCRIBE", "TRANSACTION", ..] => StatementKind::DescribeTransaction,
        ["SHOW", "TRANSACTIONS", ..] => StatementKind::ShowTransactions,
        ["BACKUP", ..] => StatementKind::Backup,
        ["USE", "DOMAIN", ..] => StatementKind::Routed(RoutedRequest::SelectDomain),
        ["ATTACH", "TRANSACTION", ..] => StatementKind::Routed(RoutedRequest::AttachTransaction),
        ["INSPECT", "TRANSACTION", ..] => StatementKind::Routed(RoutedRequest::InspectTransaction),
        ["CREATE", "SUBSCRIPTION", ..] => StatementKind::Routed(RoutedRequest::Subscribe),
        ["DROP", "SUBSCRIPTION", ..] => StatementKind::Routed(RoutedRequest::Unsubscribe),
        ["ATTACH", "DOMAIN", "CLOCK"] => StatementKind::Routed(RoutedRequest::AttachDomainClock),
        ["DETACH", "DOMAIN", "CLOCK"] => StatementKind::Routed(RoutedRequest::DetachDomainClock),
        ["RESTORE", ..] => StatementKind::Routed(RoutedRequest::Restore),
        ["SHOW", ..] | ["DESCRIBE", ..] => StatementKind::Read,
        _ => StatementKind::Other,
    }
}

/// Checks that `query` may travel as one `CommandRequest` (L-2), given whether the session
/// holds a transaction.
pub fn check_command(
    query: &str,
    holding_transaction: bool,
) -> Result<CommandShape, StatementError> {
    let statements = split(query)?;
    if statements.is_empty() {
        return Err(StatementError::Empty);
    }
    let kinds: Vec<StatementKind> = statements.iter().map(|s| classify(s)).collect();
    for (s, k) in statements.iter().zip(&kinds) {
        if let StatementKind::Routed(request) = k {
            return Err(StatementError::NeedsOwnRequest {
                statement: leading_words(s, 3).join(" "),
                request: *request,
            });
        }
    }
    if kinds.len() > 1 {
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
    }
    Ok(CommandShape { kinds })
}
