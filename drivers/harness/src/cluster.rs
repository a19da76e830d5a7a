//! A deterministic in-process Nervix cluster that speaks real frames, with injectable faults.
//!
//! [`SimCluster`] holds one or more simulated nodes (`node-1`, `node-2`, ...) that share one
//! replicated state: the record of command outcomes by execution reference, the transactions,
//! the domains and the subscription names. One node leads. A driver opens streams with
//! [`SimCluster::connect`], hands in client frames with [`SimCluster::receive`] and drains what
//! the nodes send with [`SimCluster::poll_output`]. Replies are produced at once; network delay,
//! loss, duplication, reordering and cuts are the driver's business.
//!
//! Nothing here reads a clock, does I/O or draws ambient randomness: time comes in with every
//! call as a virtual [`Timestamp`], and every random choice (fault injection, transaction
//! identities, row values) comes from a SplitMix64 generator seeded by [`ClusterConfig::seed`].
//! Two clusters built from the same configuration and fed the same inputs produce the same
//! frames and the same [`SimCluster::trace`].
//!
//! # What the nodes serve
//!
//! * `CommandRequest`: the statements of the query, split at `;`. `BEGIN` (with a domain)
//!   opens a transaction bound to the session; later statements on that session are appended
//!   and must carry `expected_transaction_position`; `COMMIT` checks `expected_preview`;
//!   `REVERT` (or `ROLLBACK`) reverts. Without a bound transaction a statement runs on its own.
//!   Every admitted command is recorded under its execution reference; a repeat with the same
//!   query, domain and position returns the recorded outcome marked `Recovered`, a repeat with
//!   something else is an `ExecutionReferenceConflict`. Answers given before admission
//!   (redirects, `TransactionDetached`, `TransactionTakenOver`, `PreviewStale`, a wrong or missing
//!   position, a `BEGIN` without a domain) are not recorded.
//! * A command that carries `expected_transaction_position` or `expected_preview` is checked
//!   against the session's binding before its reference is looked up: with no binding it is
//!   answered `TransactionTakenOver` if another session took the transaction over, and
//!   `TransactionDetached` otherwise (so a repeat after a lost binding needs an attach first).
//!   The exception is a repeat of a command recorded under a transaction that has already
//!   finished, which gets its recorded outcome at once. The detached transaction is named by the request's
//!   preview, else by the transaction the reference was recorded under, else by the last
//!   transaction the session held, else by the empty string.
//! * `AttachTransactionRequest`, `InspectTransactionRequest` (always answered with an
//!   `InspectionRejected`; the simulation keeps no impact reports), `ListDomainsRequest`,
//!   `SelectDomainRequest`, `SuggestRequest` (NSPL keywords), `ChoiceLookupRequest` (domain pace
//!   and placement policy choices; other targets answer an empty `Ready` page),
//!   `SubscribeRequest` (statement `CREATE SUBSCRIPTION <name> FROM <relay>`; the reply is
//!   followed by one `SubscriptionRows` frame), `UnsubscribeRequest`, `CancelRequest`,
//!   `AttachDomainClockRequest` and `DetachDomainClockRequest`. Anything else is answered
//!   `RequestRejected` `UnsupportedRequest`.
//! * A session holding a transaction is refused `SubscribeRequest`, `UnsubscribeRequest`,
//!   `AttachDomainClockRequest` and `DetachDomainClockRequest` with the outcome's
//!   `RequestFailed` disposition.
//! * Followers serve reads: `ListDomainsRequest`, `SuggestRequest`, `ChoiceLookupRequest`, and
//!   commands whose every statement starts with `SHOW` or `DESCRIBE` (other than
//!   `SHOW TRANSACTIONS` and `DESCRIBE TRANSACTION`) and that carry neither a position nor a
//!   preview. They also serve the session-local requests whose replies have no redirect
//!   (`SelectDomainRequest`, subscriptions, domain clocks, `CancelRequest`). Other commands,
//!   attaches and inspections are answered with a `LeaderRedirect` disposition naming the
//!   leader, or naming no leader while the leader node is down.
//! * Requests in flight: a request is in flight from its arrival until the last frame of its
//!   reply has been taken with [`SimCluster::poll_output`]. A request arriving while
//!   [`ClusterConfig::max_in_flight`] are in flight on its session is answered `RequestRejected`
//!   `TooManyRequestsInFlight`; one reusing an identity in flight is answered
//!   `DuplicateRequestId`. A `CancelRequest` whose target is in flight is answered `Requested`;
//!   if none of the target's reply has been taken yet and the target was a command admitted
//!   (or recovered) or a read, its queued reply is replaced in place by `RequestCancelled`
//!   (`AfterAdmission` for commands, `BeforeAdmission` for reads). Otherwise the target keeps
//!   its ordinary reply.
//! * Sessions: a session ended cleanly by the client ([`SimCluster::close`] with `clean`)
//!   reverts its transaction; any other ending (unclean close, a node going down, a
//!   `SessionEnding`, a leader change) only drops the binding and leaves the transaction open.
//!   An open transaction expires [`TRANSACTION_EXPIRY`] after its last attach, append or
//!   `BEGIN`.

use bytes::Bytes;
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ClientFrame, ServerMessageRoot};
use nervix_protocol::limits::{FRAME_LIMIT, TRANSFER_LIMIT};
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;
use std::time::Duration;

/// How long an open transaction lives without an attach, an append or a `BEGIN`: 15 minutes.
pub const TRANSACTION_EXPIRY: Duration = Duration::from_secs(15 * 60);

/// The largest chunk a transfer part carries: the frame limit less room for the part's own
/// fields.
const MAX_PART: usize = FRAME_LIMIT - 1024;

/// Keywords offered by `SuggestRequest`.
const KEYWORDS: &[&str] = &[
    "ALTER", "BEGIN", "COMMIT", "CREATE", "DESCRIBE", "DROP", "REVERT", "SHOW", "START", "STOP",
];

/// Probabilities (each from 0.0 to 1.0; 0.0, the default, never; 1.0 always) of the faults a
/// [`SimCluster`] injects. Draws happen only for flags strictly between 0 and 1, so a flag at 0
/// or 1 does not change the random choices made elsewhere.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Faults {
    /// A request is answered `RequestRejected` `TooManyRequestsInFlight` and nothing is done.
    pub too_many_in_flight: f64,
    /// A read (a request a follower may serve) is answered `RequestRejected` `ServerBusy` and
    /// nothing is done.
    pub server_busy: f64,
    /// An admitted command's outcome is recorded, but the reply is `OutcomeUnknown` with cause
    /// `StillApplying`; a repeat under the same reference returns the recorded outcome as
    /// `Recovered`.
    pub outcome_unknown: f64,
    /// A follower's `LeaderRedirect` names no leader, as during an election.
    pub redirect_without_endpoint: f64,
    /// The request is served (its effects happen), but its reply is replaced by one malformed
    /// frame that fails the checked reader (a wrong identifier, a truncated frame or a root
    /// offset out of range).
    pub violation: f64,
    /// Instead of serving the request the node ends the session: `SessionEnding` with reason
    /// `LeaderRedirect` naming the leader, then [`Output::Close`]. The request has no effect.
    pub session_ending: f64,
    /// A reply is split into two to four transfer parts even when it fits in one frame.
    pub transfer_parts: f64,
    /// Before serving a positioned command (one that carries `expected_transaction_position`
    /// or `expected_preview`) on a session holding a transaction, the leader forgets the
    /// binding; the command is answered `TransactionDetached` and the transaction stays open.
    pub detach_binding: f64,
}

impl Faults {
    /// Every fault at probability `p`.
    pub fn all(p: f64) -> Self {
        Self {
            too_many_in_flight: p,
            server_busy: p,
            outcome_unknown: p,
            redirect_without_endpoint: p,
            violation: p,
            session_ending: p,
            transfer_parts: p,
            detach_binding: p,
        }
    }
}

/// How a [`SimCluster`] is built.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterConfig {
    /// Number of nodes; 1 or 3 are the intended shapes, 0 is taken as 1. Default 3.
    pub nodes: usize,
    /// Seed of the cluster's random generator. Default 0.
    pub seed: u64,
    /// Fault probabilities. Default: none.
    pub faults: Faults,
    /// Replies larger than this many bytes are sent as transfer parts carrying at most this
    /// many bytes of chunk each (clamped to 1 ..= the frame limit less 1 KiB). Default 64 KiB.
    pub part_size: usize,
    /// The most requests one session may have in flight; more are answered
    /// `TooManyRequestsInFlight`. Default 64.
    pub max_in_flight: usize,
    /// The domains the cluster holds, all running and unpaced. Default `tenant`, `analytics`.
    pub domains: Vec<String>,
}

impl Default for ClusterConfig {
    fn default() -> Self {
        Self {
            nodes: 3,
            seed: 0,
            faults: Faults::default(),
            part_size: 64 * 1024,
            max_in_flight: 64,
            domains: vec!["tenant".into(), "analytics".into()],
        }
    }
}

/// One stream opened with [`SimCluster::connect`]: one session on one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnId(pub u64);

impl fmt::Display for ConnId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "conn {}", self.0)
    }
}

/// What a node sends on a stream.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// One server frame (NXSM), or a malformed one when [`Faults::violation`] struck.
    Frame(Bytes),
    /// The node closed the stream (after a `SessionEnding`, or with no frame when its node
    /// went down). Nothing more comes on it.
    Close,
}

/// Why [`SimCluster::connect`] refused a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectRefused {
    /// No node has that endpoint.
    UnknownEndpoint(String),
    /// The node is down.
    NodeDown(String),
}

impl fmt::Display for ConnectRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownEndpoint(e) => write!(f, "no node has the endpoint {e}"),
            Self::NodeDown(n) => write!(f, "{n} is down"),
        }
    }
}

impl std::error::Error for ConnectRefused {}

/// SplitMix64: a small, seedable, portable generator.
#[derive(Debug, Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// A uniform draw in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The SplitMix64 output function.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A deterministic 32-byte digest of `parts` (not cryptographic; it only has to tell
/// transaction previews apart).
fn digest(parts: &[&str]) -> Vec<u8> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    let mut out = Vec::with_capacity(32);
    for i in 0..4u64 {
        out.extend_from_slice(&mix(h ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_le_bytes());
    }
    out
}

#[derive(Debug)]
struct Node {
    name: String,
    endpoint: String,
    console: String,
    down: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TxState {
    Open,
    Committed,
    Reverted,
    Expired,
}

#[derive(Debug)]
struct Transaction {
    id: String,
    domain: String,
    state: TxState,
    ops: Vec<String>,
    applied: u64,
    last_activity: Timestamp,
    holder: Option<ConnId>,
}

impl Transaction {
    fn accepted(&self) -> u64 {
        self.ops.len() as u64
    }

    fn status(&self) -> TransactionStatusT {
        let state = match self.state {
            TxState::Open => TransactionStateT::TransactionOpen(Box::default()),
            TxState::Committed => TransactionStateT::TransactionCommitted(Box::default()),
            TxState::Reverted => TransactionStateT::TransactionReverted(Box::default()),
            TxState::Expired => TransactionStateT::TransactionExpired(Box::default()),
        };
        TransactionStatusT {
            transaction_id: self.id.clone(),
            domain: self.domain.clone(),
            state,
            accepted_operations: self.accepted(),
            applied_operations: self.applied,
        }
    }

    /// The preview of the whole transaction as accepted so far.
    fn preview(&self) -> TransactionPreviewIdentityT {
        let mut parts: Vec<&str> = vec![&self.id, &self.domain];
        parts.extend(self.ops.iter().map(String::as_str));
        TransactionPreviewIdentityT {
            transaction_id: self.id.clone(),
            position: self.accepted(),
            planning_basis: Box::new(FingerprintT {
                bytes: digest(&parts),
            }),
        }
    }
}

/// What the cluster recorded for one execution reference.
#[derive(Debug)]
struct Record {
    query: String,
    domain: Option<String>,
    position: Option<u64>,
    transaction: Option<String>,
    outcome: CommandOutcomeT,
}

#[derive(Debug)]
struct Session {
    node: usize,
    open: bool,
    bound: Option<String>,
    last_transaction: Option<String>,
    taken_over: Option<String>,
    subscriptions: BTreeMap<String, (String, u64)>,
    clocks: BTreeSet<String>,
    in_flight: BTreeSet<u64>,
}

#[derive(Debug)]
struct Queued {
    conn: ConnId,
    output: Output,
    /// The request whose reply this frame belongs to.
    request: Option<u64>,
    /// Whether that request counts as in flight until its terminal frame is taken.
    counted: bool,
    /// Frames in the whole reply.
    frames: usize,
    /// The last frame of the reply.
    terminal: bool,
    /// What a cancellation turns the reply into, if it may be replaced.
    stage: Option<CancellationStage>,
}

/// A served request: the reply body, how the trace tells it, and frames that follow it.
struct Served {
    body: ReplyBodyT,
    summary: String,
    stage: Option<CancellationStage>,
    after: Vec<ServerMessageT>,
}

impl Served {
    fn new(body: ReplyBodyT, summary: impl Into<String>) -> Self {
        Self {
            body,
            summary: summary.into(),
            stage: None,
            after: Vec::new(),
        }
    }

    fn stage(mut self, stage: CancellationStage) -> Self {
        self.stage = Some(stage);
        self
    }
}

/// What one statement of a command does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stmt {
    Begin,
    Commit,
    Revert,
    /// `SHOW TRANSACTIONS` / `DESCRIBE TRANSACTION`: served by the leader only.
    LeaderRead,
    /// Any other `SHOW` / `DESCRIBE`: a follower may serve it.
    Read,
    Write,
}

fn classify(statement: &str) -> Stmt {
    let upper = statement.to_ascii_uppercase();
    let mut words = upper.split_whitespace();
    let first = words.next().unwrap_or("");
    let second = words.next().unwrap_or("");
    match first {
        "BEGIN" => Stmt::Begin,
        "COMMIT" => Stmt::Commit,
        "REVERT" | "ROLLBACK" => Stmt::Revert,
        "SHOW" if second == "TRANSACTIONS" => Stmt::LeaderRead,
        "DESCRIBE" if second == "TRANSACTION" => Stmt::LeaderRead,
        "SHOW" | "DESCRIBE" if !second.is_empty() => Stmt::Read,
        _ => Stmt::Write,
    }
}

fn statements(query: &str) -> Vec<String> {
    query
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

/// Whether a follower may serve `request`.
fn follower_read(request: &ClientRequestT) -> bool {
    match request {
        ClientRequestT::ListDomainsRequest(_)
        | ClientRequestT::SuggestRequest(_)
        | ClientRequestT::ChoiceLookupRequest(_) => true,
        ClientRequestT::CommandRequest(c) => read_command(c),
        _ => false,
    }
}

fn read_command(c: &CommandRequestT) -> bool {
    let stmts = statements(&c.query);
    c.expected_transaction_position.is_none()
        && c.expected_preview.is_none()
        && !stmts.is_empty()
        && stmts.iter().all(|s| classify(s) == Stmt::Read)
}

fn short(text: &str, max: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max).collect();
        format!("{cut}...")
    }
}

fn describe_request(request: &ClientRequestT) -> String {
    match request {
        ClientRequestT::CommandRequest(c) => {
            let mut s = format!(
                "COMMAND ref={} {:?}",
                c.execution_reference,
                short(&c.query, 40)
            );
            if let Some(d) = &c.domain {
                s.push_str(&format!(" domain={d}"));
            }
            if let Some(p) = c.expected_transaction_position {
                s.push_str(&format!(" pos={p}"));
            }
            if let Some(p) = &c.expected_preview {
                s.push_str(&format!(" preview={}@{}", p.transaction_id, p.position));
            }
            s
        }
        ClientRequestT::AttachTransactionRequest(a) => format!("ATTACH {:?}", a.transaction_id),
        ClientRequestT::CancelRequest(c) => format!("CANCEL req {}", c.target_request_id),
        ClientRequestT::SubscribeRequest(s) => {
            format!("SUBSCRIBE {} {:?}", s.domain, short(&s.statement, 40))
        }
        other => other
            .client_request_type()
            .variant_name()
            .unwrap_or("undeclared request")
            .to_string(),
    }
}

fn fmt_time(t: Timestamp) -> String {
    let n = t.as_nanos();
    format!("t={}.{:09}", n / 1_000_000_000, n % 1_000_000_000)
}

fn name_of<T: fmt::Debug>(v: T) -> String {
    format!("{v:?}")
}

fn command_outcome(
    reference: &str,
    origin: OutcomeOrigin,
    disposition: CommandDispositionT,
    message: String,
) -> CommandOutcomeT {
    CommandOutcomeT {
        execution_reference: reference.to_string(),
        origin: Some(origin),
        disposition,
        message,
        ..Default::default()
    }
}

fn rejected(rejection: RequestRejection, field: Option<&str>, message: &str) -> Served {
    Served::new(
        ReplyBodyT::RequestRejected(Box::new(RequestRejectedT {
            rejection: Some(rejection),
            field: field.map(str::to_string),
            message: message.to_string(),
        })),
        format!("RequestRejected({})", name_of(rejection)),
    )
}

fn completed() -> CommandDispositionT {
    CommandDispositionT::CommandCompleted(Box::new(CommandCompletedT {
        already_existed: false,
    }))
}

/// A deterministic in-process cluster of simulated Nervix nodes. See the [module
/// documentation](self) for what it serves and how faults are injected.
#[derive(Debug)]
pub struct SimCluster {
    config: ClusterConfig,
    part_size: usize,
    nodes: Vec<Node>,
    leader: usize,
    rng: Rng,
    encoder: Encoder,
    now: Timestamp,
    next_conn: u64,
    sessions: BTreeMap<ConnId, Session>,
    transactions: BTreeMap<String, Transaction>,
    records: BTreeMap<String, Record>,
    created: BTreeSet<String>,
    generations: BTreeMap<(String, String), u64>,
    next_row: u64,
    out: VecDeque<Queued>,
    trace: Vec<String>,
}

impl SimCluster {
    /// A cluster built from `config`, with `node-1` leading and every node up.
    pub fn new(config: ClusterConfig) -> Self {
        let count = config.nodes.max(1);
        let nodes = (1..=count)
            .map(|i| Node {
                name: format!("node-{i}"),
                endpoint: format!("https://node-{i}.sim:7443/"),
                console: format!("https://node-{i}.sim:8443/"),
                down: false,
            })
            .collect();
        let mut cluster = Self {
            part_size: config.part_size.clamp(1, MAX_PART),
            rng: Rng(config.seed),
            config,
            nodes,
            leader: 0,
            encoder: Encoder::new(),
            now: Timestamp::ZERO,
            next_conn: 1,
            sessions: BTreeMap::new(),
            transactions: BTreeMap::new(),
            records: BTreeMap::new(),
            created: BTreeSet::new(),
            generations: BTreeMap::new(),
            next_row: 1,
            out: VecDeque::new(),
            trace: Vec::new(),
        };
        cluster.log(format!(
            "cluster of {count} node(s), seed {}, leader node-1",
            cluster.config.seed
        ));
        cluster
    }

    /// The configuration the cluster was built from (with the faults now in force).
    pub fn config(&self) -> &ClusterConfig {
        &self.config
    }

    /// Replaces the fault probabilities from now on.
    pub fn set_faults(&mut self, faults: Faults) {
        self.log(format!("faults set to {faults:?}"));
        self.config.faults = faults;
    }

    /// The nodes' endpoints in node order: `https://node-1.sim:7443/`, ...
    pub fn endpoints(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.endpoint.clone()).collect()
    }

    /// The name of node `index` (`node-1` for index 0). Panics if `index` is out of range.
    pub fn node_name(&self, index: usize) -> &str {
        &self.nodes[index].name
    }

    /// The index of the leading node.
    pub fn leader(&self) -> usize {
        self.leader
    }

    /// Makes node `index` the leader. Sessions on the old leader receive a `SessionEnding`
    /// with reason `LeaderRedirect` naming the new leader (no leader if it is down) and are
    /// closed; the transaction bindings they held are lost and the transactions stay open.
    /// Sessions on the other nodes receive a `LeadershipObserved` frame. Panics if `index` is
    /// out of range.
    pub fn set_leader(&mut self, now: Timestamp, index: usize) {
        assert!(index < self.nodes.len(), "no node {index}");
        self.tick(now);
        if index == self.leader {
            self.log(format!("{} already leads", self.nodes[index].name));
            return;
        }
        let old = self.leader;
        self.leader = index;
        self.log(format!(
            "leader change {} -> {}",
            self.nodes[old].name, self.nodes[index].name
        ));
        let leader = self.leader_endpoints();
        let conns: Vec<(ConnId, usize)> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.open)
            .map(|(c, s)| (*c, s.node))
            .collect();
        for (conn, node) in conns {
            if node == old {
                self.log(format!(
                    "{} {conn} -> SessionEnding(LeaderRedirect({}))",
                    self.nodes[node].name, self.nodes[index].name
                ));
                self.end_session(
                    conn,
                    SessionEndReasonT::LeaderRedirect(Box::new(LeaderRedirectT {
                        leader: leader.clone(),
                    })),
                );
            } else {
                let leadership = match &leader {
                    None => LeadershipT::LeaderUnknown(Box::default()),
                    Some(_) if node == index => {
                        LeadershipT::LeaderIsServingNode(Box::new(LeaderIsServingNodeT {
                            node: self.nodes[index].name.clone(),
                        }))
                    }
                    Some(l) => {
                        LeadershipT::LeaderIsRemote(Box::new(LeaderIsRemoteT { leader: l.clone() }))
                    }
                };
                self.log(format!(
                    "{} {conn} -> LeadershipObserved({})",
                    self.nodes[node].name,
                    leadership.leadership_type().variant_name().unwrap_or("?")
                ));
                self.push_unsolicited(
                    conn,
                    ServerMessageT {
                        body: ServerBodyT::LeadershipObserved(Box::new(LeadershipObservedT {
                            leadership,
                        })),
                    },
                );
            }
        }
    }

    /// Marks node `index` down (or up again). A node going down drops every session on it
    /// without a frame ([`Output::Close`] only; bindings are lost, transactions stay open) and
    /// refuses new streams. While the leader is down, followers redirect naming no leader.
    /// Panics if `index` is out of range.
    pub fn set_down(&mut self, index: usize, down: bool) {
        assert!(index < self.nodes.len(), "no node {index}");
        self.nodes[index].down = down;
        self.log(format!(
            "{} {}",
            self.nodes[index].name,
            if down { "down" } else { "up" }
        ));
        if !down {
            return;
        }
        let conns: Vec<ConnId> = self
            .sessions
            .iter()
            .filter(|(_, s)| s.open && s.node == index)
            .map(|(c, _)| *c)
            .collect();
        for conn in conns {
            self.log(format!(
                "{} {conn} -> Close (node down)",
                self.nodes[index].name
            ));
            self.push(conn, Output::Close);
            self.drop_session(conn, false);
        }
    }

    /// Opens a stream (one session) to the node with `endpoint` (a trailing `/` is optional).
    pub fn connect(&mut self, now: Timestamp, endpoint: &str) -> Result<ConnId, ConnectRefused> {
        self.tick(now);
        let wanted = endpoint.trim_end_matches('/');
        let Some(node) = self
            .nodes
            .iter()
            .position(|n| n.endpoint.trim_end_matches('/') == wanted)
        else {
            self.log(format!("connect {endpoint} -> refused (unknown endpoint)"));
            return Err(ConnectRefused::UnknownEndpoint(endpoint.to_string()));
        };
        if self.nodes[node].down {
            self.log(format!("connect {endpoint} -> refused (node down)"));
            return Err(ConnectRefused::NodeDown(self.nodes[node].name.clone()));
        }
        let conn = ConnId(self.next_conn);
        self.next_conn += 1;
        self.sessions.insert(
            conn,
            Session {
                node,
                open: true,
                bound: None,
                last_transaction: None,
                taken_over: None,
                subscriptions: BTreeMap::new(),
                clocks: BTreeSet::new(),
                in_flight: BTreeSet::new(),
            },
        );
        self.log(format!("connect {} -> {conn}", self.nodes[node].name));
        Ok(conn)
    }

    /// Whether the stream `conn` is still open on the cluster's side.
    pub fn is_open(&self, conn: ConnId) -> bool {
        self.sessions.get(&conn).is_some_and(|s| s.open)
    }

    /// The node serving `conn`.
    pub fn node_of(&self, conn: ConnId) -> Option<usize> {
        self.sessions.get(&conn).map(|s| s.node)
    }

    /// The transaction bound to the session on `conn`, if any.
    pub fn bound_transaction(&self, conn: ConnId) -> Option<&str> {
        self.sessions.get(&conn).and_then(|s| s.bound.as_deref())
    }

    /// The replicated status of transaction `id`.
    pub fn transaction_status(&self, id: &str) -> Option<TransactionStatusT> {
        self.transactions.get(id).map(Transaction::status)
    }

    /// A client frame arrives on `conn`. A frame that fails the checked reader ends the session
    /// with `SessionEnding` (`ProtocolViolated`) and [`Output::Close`]. Frames on a closed or
    /// unknown stream are ignored.
    pub fn receive(&mut self, now: Timestamp, conn: ConnId, frame: Bytes) {
        self.tick(now);
        let Some(node) = self.sessions.get(&conn).filter(|s| s.open).map(|s| s.node) else {
            self.log(format!("{conn}: frame on a closed stream ignored"));
            return;
        };
        let name = self.nodes[node].name.clone();
        let message = match ClientFrame::check(frame) {
            Ok(f) => f.unpack(),
            Err(v) => {
                self.log(format!(
                    "{name} {conn} bad client frame ({}) -> SessionEnding(ProtocolViolated)",
                    v.rule()
                ));
                self.end_session(
                    conn,
                    SessionEndReasonT::ProtocolViolated(Box::new(ProtocolViolatedT {
                        message: v.to_string(),
                    })),
                );
                return;
            }
        };
        let id = message.request_id;
        let head = format!(
            "{name} {conn} req {id} {}",
            describe_request(&message.request)
        );
        if self.chance(self.config.faults.session_ending) {
            let leader = self.leader_endpoints();
            self.log(format!(
                "{head} -> SessionEnding(LeaderRedirect({})) [fault session_ending]",
                leader.as_ref().map_or("no leader", |l| l.node.as_str())
            ));
            self.end_session(
                conn,
                SessionEndReasonT::LeaderRedirect(Box::new(LeaderRedirectT { leader })),
            );
            return;
        }
        let (duplicate, full) = {
            let s = &self.sessions[&conn];
            (
                s.in_flight.contains(&id),
                s.in_flight.len() >= self.config.max_in_flight,
            )
        };
        let refusal = if duplicate {
            Some((RequestRejection::DuplicateRequestId, ""))
        } else if full {
            Some((RequestRejection::TooManyRequestsInFlight, ""))
        } else if self.chance(self.config.faults.too_many_in_flight) {
            Some((
                RequestRejection::TooManyRequestsInFlight,
                " [fault too_many_in_flight]",
            ))
        } else if follower_read(&message.request) && self.chance(self.config.faults.server_busy) {
            Some((RequestRejection::ServerBusy, " [fault server_busy]"))
        } else {
            None
        };
        if let Some((rejection, note)) = refusal {
            let served = rejected(rejection, None, "the request was not admitted");
            let notes = self.emit_reply(conn, id, served.body, None, false);
            self.log(format!("{head} -> {}{note}{notes}", served.summary));
            return;
        }
        let served = self.serve(conn, node, id, message.request);
        let notes = self.emit_reply(conn, id, served.body, served.stage, true);
        self.log(format!("{head} -> {}{notes}", served.summary));
        for m in served.after {
            self.push_unsolicited(conn, m);
        }
    }

    /// The client ended the stream `conn`. A clean end (half-close) reverts the session's
    /// transaction; any other end leaves it open. Frames not yet taken for `conn` are dropped.
    pub fn close(&mut self, now: Timestamp, conn: ConnId, clean: bool) {
        self.tick(now);
        self.out.retain(|q| q.conn != conn);
        let how = if clean { "clean" } else { "unclean" };
        if !self.is_open(conn) {
            self.log(format!("{conn} client close ({how}) of an ended stream"));
            return;
        }
        let name = self.nodes[self.sessions[&conn].node].name.clone();
        let bound = self.drop_session(conn, clean);
        let effect = match (bound, clean) {
            (Some(tx), true) => format!(" -> {tx} reverted"),
            (Some(tx), false) => format!(" -> {tx} left open"),
            (None, _) => String::new(),
        };
        self.log(format!("{name} {conn} client close ({how}){effect}"));
    }

    /// Takes the next thing a node sent, in the order the nodes sent them across all streams.
    pub fn poll_output(&mut self) -> Option<(ConnId, Output)> {
        let q = self.out.pop_front()?;
        if q.terminal && q.counted {
            if let (Some(id), Some(s)) = (q.request, self.sessions.get_mut(&q.conn)) {
                s.in_flight.remove(&id);
            }
        }
        Some((q.conn, q.output))
    }

    /// Moves virtual time to `now` (never backwards) and runs what is due: open transactions
    /// idle for [`TRANSACTION_EXPIRY`] expire and lose their binding.
    pub fn advance(&mut self, now: Timestamp) {
        self.tick(now);
    }

    /// The outcome recorded under an execution reference, if the command was admitted: what
    /// a repeat of it is answered with. Simulation checks compare what a client reported with
    /// this record.
    pub fn recorded_outcome(&self, reference: &str) -> Option<&CommandOutcomeT> {
        self.records.get(reference).map(|r| &r.outcome)
    }

    /// One line per thing the cluster did, in order.
    pub fn trace(&self) -> &[String] {
        &self.trace
    }

    // ----- internals -----

    fn log(&mut self, line: String) {
        self.trace.push(format!("{} {line}", fmt_time(self.now)));
    }

    fn chance(&mut self, p: f64) -> bool {
        if p.is_nan() || p <= 0.0 {
            false
        } else if p >= 1.0 {
            true
        } else {
            self.rng.unit() < p
        }
    }

    fn tick(&mut self, now: Timestamp) {
        if now > self.now {
            self.now = now;
        }
        let due: Vec<String> = self
            .transactions
            .values()
            .filter(|t| {
                t.state == TxState::Open
                    && self.now.saturating_since(t.last_activity) >= TRANSACTION_EXPIRY
            })
            .map(|t| t.id.clone())
            .collect();
        for id in due {
            let holder = {
                let t = self.transactions.get_mut(&id).expect("due transaction");
                t.state = TxState::Expired;
                t.holder.take()
            };
            if let Some(s) = holder.and_then(|h| self.sessions.get_mut(&h)) {
                s.bound = None;
            }
            self.log(format!("{id} expired"));
        }
    }

    fn leader_endpoints(&self) -> Option<Box<LeaderEndpointsT>> {
        let n = &self.nodes[self.leader];
        (!n.down).then(|| {
            Box::new(LeaderEndpointsT {
                node: n.name.clone(),
                grpc_uri: Some(n.endpoint.clone()),
                web_console_uri: Some(n.console.clone()),
            })
        })
    }

    /// The leader a follower's redirect names.
    fn redirect_leader(&mut self) -> Option<Box<LeaderEndpointsT>> {
        let leader = self.leader_endpoints();
        if leader.is_some() && self.chance(self.config.faults.redirect_without_endpoint) {
            return None;
        }
        leader
    }

    fn push(&mut self, conn: ConnId, output: Output) {
        self.out.push_back(Queued {
            conn,
            output,
            request: None,
            counted: false,
            frames: 1,
            terminal: true,
            stage: None,
        });
    }

    fn push_unsolicited(&mut self, conn: ConnId, msg: ServerMessageT) {
        let frame = self
            .encoder
            .encode::<ServerMessageRoot>(&msg)
            .expect("the simulated cluster writes valid frames");
        self.push(conn, Output::Frame(frame));
    }

    /// Sends `SessionEnding` with `reason`, closes the stream, and drops the session's binding.
    fn end_session(&mut self, conn: ConnId, reason: SessionEndReasonT) {
        self.push_unsolicited(
            conn,
            ServerMessageT {
                body: ServerBodyT::SessionEnding(Box::new(SessionEndingT { reason })),
            },
        );
        self.push(conn, Output::Close);
        self.drop_session(conn, false);
    }

    /// Marks the session ended; a clean end reverts its transaction. Returns the transaction
    /// it held.
    fn drop_session(&mut self, conn: ConnId, clean: bool) -> Option<String> {
        let s = self.sessions.get_mut(&conn)?;
        s.open = false;
        let tx = self.unbind(conn)?;
        if clean {
            if let Some(t) = self.transactions.get_mut(&tx) {
                t.state = TxState::Reverted;
            }
        }
        Some(tx)
    }

    fn bound(&self, conn: ConnId) -> Option<String> {
        self.sessions.get(&conn).and_then(|s| s.bound.clone())
    }

    fn bind(&mut self, conn: ConnId, tx: &str) {
        if let Some(s) = self.sessions.get_mut(&conn) {
            s.bound = Some(tx.to_string());
            s.last_transaction = Some(tx.to_string());
            s.taken_over = None;
        }
        if let Some(t) = self.transactions.get_mut(tx) {
            t.holder = Some(conn);
        }
    }

    fn unbind(&mut self, conn: ConnId) -> Option<String> {
        let tx = self.sessions.get_mut(&conn)?.bound.take()?;
        if let Some(t) = self.transactions.get_mut(&tx) {
            if t.holder == Some(conn) {
                t.holder = None;
            }
        }
        Some(tx)
    }

    fn bound_status(&self, conn: ConnId) -> Option<Box<TransactionStatusT>> {
        let tx = self.bound(conn)?;
        self.transactions.get(&tx).map(|t| Box::new(t.status()))
    }

    /// Writes a reply, applying the `violation` and `transfer_parts` faults, and queues it.
    fn emit_reply(
        &mut self,
        conn: ConnId,
        request_id: u64,
        body: ReplyBodyT,
        stage: Option<CancellationStage>,
        counted: bool,
    ) -> String {
        let msg = ServerMessageT {
            body: ServerBodyT::Reply(Box::new(ReplyT { request_id, body })),
        };
        let whole = self
            .encoder
            .encode_with_limit::<ServerMessageRoot>(&msg, TRANSFER_LIMIT)
            .expect("the simulated cluster writes valid replies");
        let mut notes = String::new();
        let frames = if self.chance(self.config.faults.violation) {
            let (bad, how) = self.malformed(&whole);
            notes.push_str(&format!(" [fault violation: {how}]"));
            vec![bad]
        } else {
            let forced = self.chance(self.config.faults.transfer_parts);
            if forced || whole.len() > self.part_size {
                let size = if forced {
                    let k = 2 + (self.rng.next() % 3) as usize;
                    whole.len().div_ceil(k).min(self.part_size)
                } else {
                    self.part_size
                };
                let parts = self.split(request_id, &whole, size);
                notes.push_str(&format!(
                    " [{} transfer parts{}]",
                    parts.len(),
                    if forced { ", fault transfer_parts" } else { "" }
                ));
                parts
            } else {
                vec![whole]
            }
        };
        let n = frames.len();
        for (i, frame) in frames.into_iter().enumerate() {
            if i > 0 {
                // Other frames may arrive between the parts of one reply (F-7).
                let notice = ServerMessageT {
                    body: ServerBodyT::ServerNotice(Box::new(ServerNoticeT {
                        level: Some(NoticeLevel::Info),
                        message: format!("between parts {i} and {} of request {request_id}", i + 1),
                    })),
                };
                let notice = self
                    .encoder
                    .encode::<ServerMessageRoot>(&notice)
                    .expect("notice frame");
                self.out.push_back(Queued {
                    conn,
                    output: Output::Frame(notice),
                    request: None,
                    counted: false,
                    frames: 1,
                    terminal: true,
                    stage: None,
                });
            }
            self.out.push_back(Queued {
                conn,
                output: Output::Frame(frame),
                request: Some(request_id),
                counted,
                frames: n,
                terminal: i + 1 == n,
                stage,
            });
        }
        if counted {
            if let Some(s) = self.sessions.get_mut(&conn) {
                s.in_flight.insert(request_id);
            }
        }
        notes
    }

    fn malformed(&mut self, whole: &Bytes) -> (Bytes, &'static str) {
        let mut bytes = whole.to_vec();
        match self.rng.next() % 3 {
            0 => {
                bytes[4..8].copy_from_slice(b"NXZZ");
                (Bytes::from(bytes), "wrong identifier")
            }
            1 => {
                bytes.truncate(6);
                (Bytes::from(bytes), "truncated frame")
            }
            _ => {
                bytes[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
                (Bytes::from(bytes), "root offset out of range")
            }
        }
    }

    fn split(&mut self, request_id: u64, whole: &[u8], size: usize) -> Vec<Bytes> {
        let total = whole.len() as u64;
        let mut frames = Vec::new();
        for (i, chunk) in whole.chunks(size.max(1)).enumerate() {
            let part = ServerMessageT {
                body: ServerBodyT::Reply(Box::new(ReplyT {
                    request_id,
                    body: ReplyBodyT::TransferPart(Box::new(TransferPartT {
                        total_bytes: total,
                        offset: (i * size) as u64,
                        chunk: chunk.to_vec(),
                    })),
                })),
            };
            frames.push(
                self.encoder
                    .encode::<ServerMessageRoot>(&part)
                    .expect("transfer part frame"),
            );
        }
        frames
    }

    fn serve(&mut self, conn: ConnId, node: usize, id: u64, request: ClientRequestT) -> Served {
        let at_leader = node == self.leader;
        match request {
            ClientRequestT::CommandRequest(c) => self.command(conn, node, *c),
            ClientRequestT::AttachTransactionRequest(a) => {
                if at_leader {
                    self.attach(conn, &a.transaction_id)
                } else {
                    let leader = self.redirect_leader();
                    let summary = redirect_summary(&leader);
                    Served::new(
                        ReplyBodyT::AttachOutcome(Box::new(AttachOutcomeT {
                            disposition: AttachDispositionT::LeaderRedirect(Box::new(
                                LeaderRedirectT { leader },
                            )),
                            message: format!("{} does not lead", self.nodes[node].name),
                            diagnostics: vec![],
                        })),
                        summary,
                    )
                }
            }
            ClientRequestT::InspectTransactionRequest(i) => {
                if at_leader {
                    self.inspect(conn, &i)
                } else {
                    let leader = self.redirect_leader();
                    let summary = redirect_summary(&leader);
                    Served::new(
                        ReplyBodyT::InspectionOutcome(Box::new(InspectionOutcomeT {
                            disposition: InspectionDispositionT::LeaderRedirect(Box::new(
                                LeaderRedirectT { leader },
                            )),
                        })),
                        summary,
                    )
                }
            }
            ClientRequestT::ListDomainsRequest(_) => Served::new(
                ReplyBodyT::DomainList(Box::new(DomainListT {
                    domains: self
                        .config
                        .domains
                        .iter()
                        .map(|d| DomainInfoT {
                            domain: d.clone(),
                            status: Some(DomainStatus::Running),
                            pace: DomainPaceT::UnpacedDomain(Box::default()),
                        })
                        .collect(),
                })),
                format!("DomainList({})", self.config.domains.len()),
            )
            .stage(CancellationStage::BeforeAdmission),
            ClientRequestT::SelectDomainRequest(s) => self.select(&s.domain),
            ClientRequestT::SuggestRequest(s) => suggest(&s),
            ClientRequestT::ChoiceLookupRequest(c) => choices(&c),
            ClientRequestT::SubscribeRequest(s) => self.subscribe(conn, &s),
            ClientRequestT::UnsubscribeRequest(u) => self.unsubscribe(conn, &u.subscription),
            ClientRequestT::CancelRequest(c) => self.cancel(conn, id, c.target_request_id),
            ClientRequestT::AttachDomainClockRequest(d) => self.clock_attach(conn, &d.domain),
            ClientRequestT::DetachDomainClockRequest(d) => self.clock_detach(conn, &d.domain),
            _ => rejected(
                RequestRejection::UnsupportedRequest,
                None,
                "the simulated cluster does not serve this request",
            ),
        }
    }

    fn command(&mut self, conn: ConnId, node: usize, c: CommandRequestT) -> Served {
        let reference = c.execution_reference.clone();
        let positioned = c.expected_transaction_position.is_some() || c.expected_preview.is_some();
        if node != self.leader && !read_command(&c) {
            let leader = self.redirect_leader();
            let summary = redirect_summary(&leader);
            let outcome = command_outcome(
                &reference,
                OutcomeOrigin::Executed,
                CommandDispositionT::LeaderRedirect(Box::new(LeaderRedirectT { leader })),
                format!(
                    "{} does not lead; send the command to the leader",
                    self.nodes[node].name
                ),
            );
            return Served::new(ReplyBodyT::CommandOutcome(Box::new(outcome)), summary);
        }
        if positioned {
            if self.bound(conn).is_some() && self.chance(self.config.faults.detach_binding) {
                if let Some(tx) = self.unbind(conn) {
                    self.log(format!(
                        "{} {conn} binding of {tx} forgotten [fault detach_binding]",
                        self.nodes[node].name
                    ));
                }
            }
            // A repeat of a command recorded under a transaction that has finished gets its
            // recorded outcome even without a binding: attaching a finished transaction is
            // impossible, so answering `TransactionDetached` would leave the client stuck.
            let finished = self.records.get(&reference).is_some_and(|r| {
                r.transaction.as_ref().is_none_or(|t| {
                    self.transactions
                        .get(t)
                        .is_none_or(|t| t.state != TxState::Open)
                })
            });
            if self.bound(conn).is_none() && !finished {
                return self.unbound_positioned(conn, &c);
            }
        }
        if let Some(rec) = self.records.get(&reference) {
            let conflict = if rec.query != c.query {
                Some(ExecutionReferenceConflictKind::Content)
            } else if rec.domain != c.domain {
                Some(ExecutionReferenceConflictKind::Domain)
            } else if rec.position != c.expected_transaction_position {
                Some(ExecutionReferenceConflictKind::Position)
            } else if positioned
                && rec.transaction.is_some()
                && self.bound(conn).is_some()
                && rec.transaction != self.bound(conn)
            {
                Some(ExecutionReferenceConflictKind::Owner)
            } else {
                None
            };
            return match conflict {
                Some(kind) => {
                    let outcome = command_outcome(
                        &reference,
                        OutcomeOrigin::Executed,
                        CommandDispositionT::ExecutionReferenceConflict(Box::new(
                            ExecutionReferenceConflictT {
                                conflict: Some(kind),
                            },
                        )),
                        "the execution reference already names another command".into(),
                    );
                    Served::new(
                        ReplyBodyT::CommandOutcome(Box::new(outcome)),
                        format!("ExecutionReferenceConflict({})", name_of(kind)),
                    )
                }
                None => {
                    let mut outcome = rec.outcome.clone();
                    outcome.origin = Some(OutcomeOrigin::Recovered);
                    let summary = format!(
                        "{}(Recovered)",
                        name_of(outcome.disposition.command_disposition_type())
                    );
                    Served::new(ReplyBodyT::CommandOutcome(Box::new(outcome)), summary)
                        .stage(CancellationStage::AfterAdmission)
                }
            };
        }
        let stmts = statements(&c.query);
        let kinds: Vec<Stmt> = stmts.iter().map(|s| classify(s)).collect();
        let control = kinds
            .iter()
            .any(|k| matches!(k, Stmt::Begin | Stmt::Commit | Stmt::Revert));
        if stmts.is_empty() {
            return self.failed(conn, &reference, "the command holds no statement".into());
        }
        if control && stmts.len() > 1 {
            return self.failed(
                conn,
                &reference,
                "BEGIN, COMMIT and REVERT must be commands of their own".into(),
            );
        }
        match kinds[0] {
            Stmt::Begin => self.begin(conn, &c),
            Stmt::Commit => self.commit(conn, &c),
            Stmt::Revert => self.revert(conn, &c),
            _ if kinds
                .iter()
                .all(|k| matches!(k, Stmt::Read | Stmt::LeaderRead)) =>
            {
                self.read(conn, node, &c, &stmts, &kinds)
            }
            _ => self.write(conn, &c, &stmts),
        }
    }

    /// A positioned command on a session that holds no binding.
    fn unbound_positioned(&mut self, conn: ConnId, c: &CommandRequestT) -> Served {
        let s = &self.sessions[&conn];
        let (disposition, tx) = match &s.taken_over {
            Some(tx) => (
                CommandDispositionT::TransactionTakenOver(Box::new(TransactionTakenOverT {
                    transaction_id: tx.clone(),
                })),
                tx.clone(),
            ),
            None => {
                let tx = c
                    .expected_preview
                    .as_ref()
                    .map(|p| p.transaction_id.clone())
                    .or_else(|| {
                        self.records
                            .get(&c.execution_reference)
                            .and_then(|r| r.transaction.clone())
                    })
                    .or_else(|| s.last_transaction.clone())
                    .unwrap_or_default();
                (
                    CommandDispositionT::TransactionDetached(Box::new(TransactionDetachedT {
                        transaction_id: tx.clone(),
                    })),
                    tx,
                )
            }
        };
        let summary = format!("{}({tx})", name_of(disposition.command_disposition_type()));
        let outcome = command_outcome(
            &c.execution_reference,
            OutcomeOrigin::Executed,
            disposition,
            "this session holds no binding for the transaction; attach it and retry".into(),
        );
        Served::new(ReplyBodyT::CommandOutcome(Box::new(outcome)), summary)
    }

    /// A definitive failure before admission; nothing is recorded.
    fn failed(&mut self, conn: ConnId, reference: &str, message: String) -> Served {
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            CommandDispositionT::RequestFailed(Box::default()),
            message,
        );
        outcome.transaction = self.bound_status(conn);
        Served::new(
            ReplyBodyT::CommandOutcome(Box::new(outcome)),
            "RequestFailed(Executed)",
        )
    }

    /// Records an admitted command's outcome and answers it (or `OutcomeUnknown`, by fault).
    fn admitted(
        &mut self,
        c: &CommandRequestT,
        outcome: CommandOutcomeT,
        transaction: Option<String>,
        detail: String,
    ) -> Served {
        self.records.insert(
            c.execution_reference.clone(),
            Record {
                query: c.query.clone(),
                domain: c.domain.clone(),
                position: c.expected_transaction_position,
                transaction,
                outcome: outcome.clone(),
            },
        );
        if self.chance(self.config.faults.outcome_unknown) {
            let unknown = command_outcome(
                &c.execution_reference,
                OutcomeOrigin::Executed,
                CommandDispositionT::OutcomeUnknown(Box::new(OutcomeUnknownT {
                    cause: Some(UnknownOutcomeCause::StillApplying),
                })),
                "admitted and still applying; repeat under the same reference".into(),
            );
            return Served::new(
                ReplyBodyT::CommandOutcome(Box::new(unknown)),
                format!("OutcomeUnknown(StillApplying){detail} [fault outcome_unknown]"),
            )
            .stage(CancellationStage::AfterAdmission);
        }
        let summary = format!(
            "{}(Executed){detail}",
            name_of(outcome.disposition.command_disposition_type())
        );
        Served::new(ReplyBodyT::CommandOutcome(Box::new(outcome)), summary)
            .stage(CancellationStage::AfterAdmission)
    }

    fn begin(&mut self, conn: ConnId, c: &CommandRequestT) -> Served {
        let reference = &c.execution_reference;
        if let Some(tx) = self.bound(conn) {
            return self.failed(conn, reference, format!("this session already holds {tx}"));
        }
        let Some(domain) = c.domain.clone() else {
            return self.failed(conn, reference, "BEGIN needs a domain".into());
        };
        if !self.config.domains.contains(&domain) {
            return self.failed(conn, reference, format!("no domain named {domain}"));
        }
        let id = loop {
            let id = format!("tx-{:016x}", self.rng.next());
            if !self.transactions.contains_key(&id) {
                break id;
            }
        };
        self.transactions.insert(
            id.clone(),
            Transaction {
                id: id.clone(),
                domain,
                state: TxState::Open,
                ops: Vec::new(),
                applied: 0,
                last_activity: self.now,
                holder: None,
            },
        );
        self.bind(conn, &id);
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            completed(),
            format!("transaction {id} opened"),
        );
        outcome.transaction = self.bound_status(conn);
        self.admitted(c, outcome, Some(id.clone()), format!(" {id} opened"))
    }

    fn commit(&mut self, conn: ConnId, c: &CommandRequestT) -> Served {
        let reference = &c.execution_reference;
        let Some(tx) = self.bound(conn) else {
            return self.failed(conn, reference, "this session holds no transaction".into());
        };
        let (current, accepted) = {
            let t = &self.transactions[&tx];
            (t.preview(), t.accepted())
        };
        match &c.expected_preview {
            Some(expected) if **expected != current => {
                let mut outcome = command_outcome(
                    reference,
                    OutcomeOrigin::Executed,
                    CommandDispositionT::PreviewStale(Box::new(PreviewStaleT {
                        expected: expected.clone(),
                        current: Box::new(current),
                    })),
                    "the expected preview is out of date; nothing was applied".into(),
                );
                outcome.transaction = self.bound_status(conn);
                return Served::new(
                    ReplyBodyT::CommandOutcome(Box::new(outcome)),
                    format!("PreviewStale({tx}@{accepted})"),
                );
            }
            None if accepted > 0 => {
                return self.failed(
                    conn,
                    reference,
                    "COMMIT must carry the preview it expects to apply".into(),
                );
            }
            _ => {}
        }
        if let Some(t) = self.transactions.get_mut(&tx) {
            t.state = TxState::Committed;
            t.applied = t.accepted();
            t.last_activity = self.now;
        }
        let status = self.bound_status(conn);
        self.unbind(conn);
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            completed(),
            format!("transaction {tx} committed"),
        );
        outcome.transaction = status;
        self.admitted(c, outcome, Some(tx.clone()), format!(" {tx} committed"))
    }

    fn revert(&mut self, conn: ConnId, c: &CommandRequestT) -> Served {
        let reference = &c.execution_reference;
        let Some(tx) = self.bound(conn) else {
            return self.failed(conn, reference, "this session holds no transaction".into());
        };
        if let Some(t) = self.transactions.get_mut(&tx) {
            t.state = TxState::Reverted;
        }
        let status = self.bound_status(conn);
        self.unbind(conn);
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            completed(),
            format!("transaction {tx} reverted"),
        );
        outcome.transaction = status;
        self.admitted(c, outcome, Some(tx.clone()), format!(" {tx} reverted"))
    }

    fn read(
        &mut self,
        conn: ConnId,
        node: usize,
        c: &CommandRequestT,
        stmts: &[String],
        kinds: &[Stmt],
    ) -> Served {
        let name = self.nodes[node].name.clone();
        let open = self
            .transactions
            .values()
            .filter(|t| t.state == TxState::Open)
            .count();
        let answer = |s: &String, k: &Stmt| match k {
            Stmt::LeaderRead => format!("{open} open transaction(s), read on {name}"),
            _ => format!("read `{}` on {name}", short(s, 60)),
        };
        let mut outcome = command_outcome(
            &c.execution_reference,
            OutcomeOrigin::Executed,
            completed(),
            answer(&stmts[0], &kinds[0]),
        );
        if stmts.len() > 1 {
            outcome.message = format!("{} statements read on {name}", stmts.len());
            outcome.statements = stmts
                .iter()
                .zip(kinds)
                .map(|(s, k)| StatementOutcomeT {
                    disposition: StatementDispositionT::CommandCompleted(Box::new(
                        CommandCompletedT {
                            already_existed: false,
                        },
                    )),
                    message: answer(s, k),
                    diagnostics: vec![],
                })
                .collect();
        }
        outcome.transaction = self.bound_status(conn);
        let tx = self.bound(conn);
        self.admitted(c, outcome, tx, String::new())
    }

    fn write(&mut self, conn: ConnId, c: &CommandRequestT, stmts: &[String]) -> Served {
        let reference = &c.execution_reference;
        if let Some(tx) = self.bound(conn) {
            let accepted = self.transactions[&tx].accepted();
            match c.expected_transaction_position {
                None => {
                    return self.failed(
                        conn,
                        reference,
                        format!("an append to {tx} must carry its expected position ({accepted})"),
                    )
                }
                Some(p) if p != accepted => {
                    return self.failed(
                        conn,
                        reference,
                        format!("expected position {p}, but {tx} has accepted {accepted}"),
                    )
                }
                Some(_) => {}
            }
            let (admission, status, first) = {
                let t = self.transactions.get_mut(&tx).expect("bound transaction");
                let first = t.accepted() + 1;
                t.ops.extend(stmts.iter().cloned());
                t.last_activity = self.now;
                let admission = TransactionOperationAdmissionT {
                    operation: t.accepted(),
                    preview: Box::new(t.preview()),
                };
                (admission, t.status(), first)
            };
            let last = admission.operation;
            let mut outcome = command_outcome(
                reference,
                OutcomeOrigin::Executed,
                completed(),
                if stmts.len() > 1 {
                    format!("operations {first} to {last} accepted into {tx}")
                } else {
                    format!("operation {last} accepted into {tx}")
                },
            );
            if stmts.len() > 1 {
                outcome.statements = (first..=last)
                    .map(|n| StatementOutcomeT {
                        disposition: StatementDispositionT::CommandCompleted(Box::new(
                            CommandCompletedT {
                                already_existed: false,
                            },
                        )),
                        message: format!("operation {n} accepted"),
                        diagnostics: vec![],
                    })
                    .collect();
            }
            outcome.transaction = Some(Box::new(status));
            outcome.transaction_admission = Some(Box::new(admission));
            return self.admitted(c, outcome, Some(tx.clone()), format!(" {tx} op {last}"));
        }
        // No transaction: each statement runs on its own.
        let mut existed = Vec::with_capacity(stmts.len());
        for s in stmts {
            let key = s
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_ascii_uppercase();
            existed.push(key.starts_with("CREATE ") && !self.created.insert(key));
        }
        let mut outcome = command_outcome(
            reference,
            OutcomeOrigin::Executed,
            CommandDispositionT::CommandCompleted(Box::new(CommandCompletedT {
                already_existed: stmts.len() == 1 && existed[0],
            })),
            format!("executed `{}`", short(&c.query, 60)),
        );
        if stmts.len() > 1 {
            outcome.statements = stmts
                .iter()
                .zip(&existed)
                .map(|(s, e)| StatementOutcomeT {
                    disposition: StatementDispositionT::CommandCompleted(Box::new(
                        CommandCompletedT {
                            already_existed: *e,
                        },
                    )),
                    message: format!("executed `{}`", short(s, 60)),
                    diagnostics: vec![],
                })
                .collect();
        }
        self.admitted(c, outcome, None, String::new())
    }

    fn attach(&mut self, conn: ConnId, tx: &str) -> Served {
        let outcome = |disposition: AttachDispositionT, message: String| {
            ReplyBodyT::AttachOutcome(Box::new(AttachOutcomeT {
                disposition,
                message,
                diagnostics: vec![],
            }))
        };
        let Some(t) = self.transactions.get(tx) else {
            return Served::new(
                outcome(
                    AttachDispositionT::RequestFailed(Box::default()),
                    format!("no transaction named {tx}"),
                ),
                "AttachOutcome(RequestFailed)",
            );
        };
        if t.state != TxState::Open {
            let status = t.status();
            return Served::new(
                outcome(
                    AttachDispositionT::TransactionAlreadyFinished(Box::new(
                        TransactionAlreadyFinishedT {
                            transaction: Box::new(status),
                        },
                    )),
                    format!("{tx} has already finished"),
                ),
                format!("TransactionAlreadyFinished({tx})"),
            );
        }
        let previous = t.holder;
        match self.bound(conn) {
            Some(b) if b != tx => {
                return Served::new(
                    outcome(
                        AttachDispositionT::RequestFailed(Box::default()),
                        format!("this session already holds {b}"),
                    ),
                    "AttachOutcome(RequestFailed)",
                );
            }
            _ => {}
        }
        let mut summary = format!("TransactionAttached({tx})");
        if let Some(prev) = previous.filter(|p| *p != conn) {
            if let Some(s) = self.sessions.get_mut(&prev) {
                s.bound = None;
                s.taken_over = Some(tx.to_string());
            }
            summary.push_str(&format!(" taken over from {prev}"));
        }
        self.bind(conn, tx);
        let now = self.now;
        let t = self.transactions.get_mut(tx).expect("attached transaction");
        t.last_activity = now;
        let status = t.status();
        Served::new(
            outcome(
                AttachDispositionT::TransactionAttached(Box::new(TransactionAttachedT {
                    transaction: Box::new(status),
                })),
                format!("{tx} attached"),
            ),
            summary,
        )
    }

    fn inspect(&mut self, conn: ConnId, i: &InspectTransactionRequestT) -> Served {
        let target = match &i.target {
            InspectionTargetT::AttachedTransaction(_) => self.bound(conn),
            InspectionTargetT::TransactionById(t) => Some(t.transaction_id.clone()),
            _ => None,
        };
        let (rejection, message) = match target.as_ref().and_then(|t| self.transactions.get(t)) {
            None if target.is_none() => (
                InspectionRejection::NoAttachedTransaction,
                "this session holds no transaction".to_string(),
            ),
            None => (
                InspectionRejection::TransactionNotFound,
                "no such transaction".to_string(),
            ),
            Some(t) if i.operation.is_some_and(|n| n > t.accepted()) => (
                InspectionRejection::OperationNotFound,
                format!("{} has accepted {} operation(s)", t.id, t.accepted()),
            ),
            Some(_) => (
                InspectionRejection::ReportUnavailable,
                "the simulated cluster keeps no impact reports".to_string(),
            ),
        };
        Served::new(
            ReplyBodyT::InspectionOutcome(Box::new(InspectionOutcomeT {
                disposition: InspectionDispositionT::InspectionRejected(Box::new(
                    InspectionRejectedT {
                        rejection: Some(rejection),
                        message,
                    },
                )),
            })),
            format!("InspectionRejected({})", name_of(rejection)),
        )
        .stage(CancellationStage::BeforeAdmission)
    }

    fn select(&mut self, domain: &str) -> Served {
        let found = self.config.domains.iter().any(|d| d == domain);
        let selection = if found {
            DomainSelectionT::DomainSelected(Box::new(DomainSelectedT {
                domain: domain.to_string(),
            }))
        } else {
            DomainSelectionT::DomainNotFound(Box::new(DomainNotFoundT {
                domain: domain.to_string(),
            }))
        };
        let summary = format!("{}({domain})", name_of(selection.domain_selection_type()));
        Served::new(
            ReplyBodyT::DomainSelectionOutcome(Box::new(DomainSelectionOutcomeT { selection })),
            summary,
        )
    }

    fn subscribe(&mut self, conn: ConnId, s: &SubscribeRequestT) -> Served {
        let failed = |message: String| {
            Served::new(
                ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
                    disposition: SubscribeDispositionT::RequestFailed(Box::default()),
                    message,
                    diagnostics: vec![],
                })),
                "SubscribeOutcome(RequestFailed)",
            )
        };
        if let Some(tx) = self.bound(conn) {
            return failed(format!(
                "a session holding a transaction ({tx}) cannot subscribe"
            ));
        }
        if !self.config.domains.contains(&s.domain) {
            return failed(format!("no domain named {}", s.domain));
        }
        let words: Vec<&str> = s
            .statement
            .trim()
            .trim_end_matches(';')
            .split_whitespace()
            .collect();
        let from = words.iter().position(|w| w.eq_ignore_ascii_case("FROM"));
        let parsed = match (words.as_slice(), from) {
            ([create, sub, name, ..], Some(f))
                if create.eq_ignore_ascii_case("CREATE")
                    && sub.eq_ignore_ascii_case("SUBSCRIPTION")
                    && f == 3
                    && words.len() > 4 =>
            {
                Some((name.to_string(), words[4].to_string()))
            }
            _ => None,
        };
        let Some((name, relay)) = parsed else {
            return failed("expected CREATE SUBSCRIPTION <name> FROM <relay>".into());
        };
        if self.sessions[&conn].subscriptions.contains_key(&name) {
            return failed(format!("subscription {name} is already open"));
        }
        let generation = {
            let g = self
                .generations
                .entry((s.domain.clone(), name.clone()))
                .or_insert(0);
            *g += 1;
            *g
        };
        if let Some(session) = self.sessions.get_mut(&conn) {
            session
                .subscriptions
                .insert(name.clone(), (s.domain.clone(), generation));
        }
        let handle = SubscriptionHandleT {
            name: name.clone(),
            generation,
        };
        let field = |name: &str, scalar: ScalarType, nullable: bool, sensitive: bool| RowFieldT {
            name: name.into(),
            field_type: Box::new(FieldTypeT {
                shape: FieldTypeShapeT::ScalarFieldType(Box::new(ScalarFieldTypeT {
                    scalar: Some(scalar),
                })),
            }),
            nullable,
            sensitive,
        };
        let body = ReplyBodyT::SubscribeOutcome(Box::new(SubscribeOutcomeT {
            disposition: SubscribeDispositionT::SubscriptionOpened(Box::new(SubscriptionOpenedT {
                subscription: Box::new(handle.clone()),
                domain: s.domain.clone(),
                relay,
                subscription_type: Some(SubscriptionType::Row),
                schema: Box::new(RowSchemaT {
                    fields: vec![
                        field("id", ScalarType::U64, false, false),
                        field("price", ScalarType::F64, true, false),
                        field("card", ScalarType::String, false, true),
                    ],
                    branch: None,
                }),
            })),
            message: "subscribed".into(),
            diagnostics: vec![],
        }));
        let count = 1 + self.rng.next() % 3;
        let rows = (0..count)
            .map(|_| {
                let id = self.next_row;
                self.next_row += 1;
                let price = (self.rng.next() % 100_000) as f64 / 100.0;
                RowT {
                    cells: vec![
                        CellT {
                            value: CellValueT::U64Cell(Box::new(U64CellT { value: id })),
                        },
                        CellT {
                            value: CellValueT::F64Cell(Box::new(F64CellT { value: Some(price) })),
                        },
                        CellT {
                            value: CellValueT::RedactedCell(Box::default()),
                        },
                    ],
                }
            })
            .collect();
        let mut served = Served::new(body, format!("SubscriptionOpened({name}#{generation})"));
        served.after.push(ServerMessageT {
            body: ServerBodyT::SubscriptionRows(Box::new(SubscriptionRowsT {
                subscription: Box::new(handle),
                batch: Box::new(RowBatchT {
                    branch_key: None,
                    rows,
                }),
            })),
        });
        served.summary.push_str(&format!(" + {count} row(s)"));
        served
    }

    fn unsubscribe(&mut self, conn: ConnId, name: &str) -> Served {
        let failed = |message: String| {
            Served::new(
                ReplyBodyT::UnsubscribeOutcome(Box::new(UnsubscribeOutcomeT {
                    disposition: UnsubscribeDispositionT::RequestFailed(Box::default()),
                    message,
                    diagnostics: vec![],
                })),
                "UnsubscribeOutcome(RequestFailed)",
            )
        };
        if let Some(tx) = self.bound(conn) {
            return failed(format!(
                "a session holding a transaction ({tx}) cannot unsubscribe"
            ));
        }
        let Some((_, generation)) = self
            .sessions
            .get_mut(&conn)
            .and_then(|s| s.subscriptions.remove(name))
        else {
            return failed(format!("no subscription named {name} is open"));
        };
        Served::new(
            ReplyBodyT::UnsubscribeOutcome(Box::new(UnsubscribeOutcomeT {
                disposition: UnsubscribeDispositionT::SubscriptionDeleted(Box::new(
                    SubscriptionDeletedT {
                        subscription: Box::new(SubscriptionHandleT {
                            name: name.to_string(),
                            generation,
                        }),
                    },
                )),
                message: "unsubscribed".into(),
                diagnostics: vec![],
            })),
            format!("SubscriptionDeleted({name}#{generation})"),
        )
    }

    fn cancel(&mut self, conn: ConnId, own: u64, target: u64) -> Served {
        let in_flight = target != own && self.sessions[&conn].in_flight.contains(&target);
        let mut summary = String::from("CancelOutcome(NotInFlight)");
        if in_flight {
            summary = String::from("CancelOutcome(Requested)");
            let at: Vec<usize> = self
                .out
                .iter()
                .enumerate()
                .filter(|(_, q)| q.conn == conn && q.request == Some(target) && q.counted)
                .map(|(i, _)| i)
                .collect();
            let replace = at
                .first()
                .and_then(|&i| self.out[i].stage.filter(|_| self.out[i].frames == at.len()));
            if let (Some(stage), Some(&first)) = (replace, at.first()) {
                for &i in at.iter().rev() {
                    self.out.remove(i);
                }
                let msg = ServerMessageT {
                    body: ServerBodyT::Reply(Box::new(ReplyT {
                        request_id: target,
                        body: ReplyBodyT::RequestCancelled(Box::new(RequestCancelledT {
                            stage: Some(stage),
                        })),
                    })),
                };
                let frame = self
                    .encoder
                    .encode::<ServerMessageRoot>(&msg)
                    .expect("the simulated cluster writes valid frames");
                self.out.insert(
                    first,
                    Queued {
                        conn,
                        output: Output::Frame(frame),
                        request: Some(target),
                        counted: true,
                        frames: 1,
                        terminal: true,
                        stage: None,
                    },
                );
                summary.push_str(&format!(
                    "; req {target} now RequestCancelled({})",
                    name_of(stage)
                ));
            }
        }
        Served::new(
            ReplyBodyT::CancelOutcome(Box::new(CancelOutcomeT {
                target_request_id: target,
                state: Some(if in_flight {
                    CancelState::Requested
                } else {
                    CancelState::NotInFlight
                }),
            })),
            summary,
        )
    }

    fn clock_attach(&mut self, conn: ConnId, domain: &str) -> Served {
        let (disposition, message) = if let Some(tx) = self.bound(conn) {
            (
                DomainClockAttachDispositionT::RequestFailed(Box::default()),
                format!("a session holding a transaction ({tx}) cannot attach a clock"),
            )
        } else if !self.config.domains.iter().any(|d| d == domain) {
            (
                DomainClockAttachDispositionT::DomainNotFound(Box::new(DomainNotFoundT {
                    domain: domain.to_string(),
                })),
                format!("no domain named {domain}"),
            )
        } else if !self
            .sessions
            .get_mut(&conn)
            .is_some_and(|s| s.clocks.insert(domain.to_string()))
        {
            (
                DomainClockAttachDispositionT::DomainClockAlreadyAttached(Box::new(
                    DomainClockAlreadyAttachedT {
                        domain: domain.to_string(),
                    },
                )),
                "already attached".to_string(),
            )
        } else {
            (
                DomainClockAttachDispositionT::DomainClockAttached(Box::new(
                    DomainClockAttachedT {
                        domain: domain.to_string(),
                        clock: Box::new(DomainClockObservationT {
                            generation: 1,
                            state: DomainClockObservedStateT::UnpacedDomainClock(Box::default()),
                        }),
                    },
                )),
                "attached".to_string(),
            )
        };
        let summary = format!(
            "DomainClockAttachOutcome({})",
            name_of(disposition.domain_clock_attach_disposition_type())
        );
        Served::new(
            ReplyBodyT::DomainClockAttachOutcome(Box::new(DomainClockAttachOutcomeT {
                disposition,
                message,
            })),
            summary,
        )
    }

    fn clock_detach(&mut self, conn: ConnId, domain: &str) -> Served {
        let (disposition, message) = if let Some(tx) = self.bound(conn) {
            (
                DomainClockDetachDispositionT::RequestFailed(Box::default()),
                format!("a session holding a transaction ({tx}) cannot detach a clock"),
            )
        } else if self
            .sessions
            .get_mut(&conn)
            .is_some_and(|s| s.clocks.remove(domain))
        {
            (
                DomainClockDetachDispositionT::DomainClockDetached(Box::new(
                    DomainClockDetachedT {
                        domain: domain.to_string(),
                    },
                )),
                "detached".to_string(),
            )
        } else {
            (
                DomainClockDetachDispositionT::DomainClockNotAttached(Box::new(
                    DomainClockNotAttachedT {
                        domain: domain.to_string(),
                    },
                )),
                "not attached".to_string(),
            )
        };
        let summary = format!(
            "DomainClockDetachOutcome({})",
            name_of(disposition.domain_clock_detach_disposition_type())
        );
        Served::new(
            ReplyBodyT::DomainClockDetachOutcome(Box::new(DomainClockDetachOutcomeT {
                disposition,
                message,
            })),
            summary,
        )
    }
}

fn redirect_summary(leader: &Option<Box<LeaderEndpointsT>>) -> String {
    format!(
        "LeaderRedirect({})",
        leader.as_ref().map_or("no leader", |l| l.node.as_str())
    )
}

fn suggest(s: &SuggestRequestT) -> Served {
    let cursor = s.cursor as usize;
    if cursor > s.input.len() || !s.input.is_char_boundary(cursor) {
        return rejected(
            RequestRejection::InvalidRequest,
            Some("cursor"),
            "the cursor is not a character boundary of the input",
        );
    }
    let before = &s.input[..cursor];
    let start = before
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_alphanumeric() || *c == '_')
        .last()
        .map_or(cursor, |(i, _)| i);
    let prefix = before[start..].to_ascii_uppercase();
    let suggestions: Vec<SuggestionT> = KEYWORDS
        .iter()
        .filter(|k| k.starts_with(&prefix))
        .take(usize::from(s.page_size.max(1)))
        .map(|k| SuggestionT {
            value: k.to_string(),
            kind: Some(SuggestionKind::Text),
            edit: Box::new(TextEditT {
                start: start as u32,
                end: cursor as u32,
                replacement: k.to_string(),
            }),
        })
        .collect();
    let summary = format!("SuggestOutcome(Ready, {})", suggestions.len());
    Served::new(
        ReplyBodyT::SuggestOutcome(Box::new(SuggestOutcomeT {
            status: Some(SuggestionStatus::Ready),
            suggestions,
            continuation: None,
        })),
        summary,
    )
    .stage(CancellationStage::BeforeAdmission)
}

fn choices(c: &ChoiceLookupRequestT) -> Served {
    let choice = |value: ChoiceValueT, label: &str| ChoiceT {
        value,
        presentation: Box::new(ChoicePresentationT {
            label: label.to_string(),
            detail: None,
            group: None,
        }),
    };
    let all: Vec<ChoiceT> = match c.target {
        Some(ChoiceTarget::DomainPace) => [
            (DomainPaceChoice::Unpaced, "UNPACED"),
            (DomainPaceChoice::Paced, "PACED"),
        ]
        .into_iter()
        .map(|(v, l)| {
            choice(
                ChoiceValueT::DomainPaceVariant(Box::new(DomainPaceVariantT { value: Some(v) })),
                l,
            )
        })
        .collect(),
        Some(ChoiceTarget::PlacementPolicy) => [
            (
                PlacementPolicyChoice::RequireColocation,
                "REQUIRE COLOCATION",
            ),
            (PlacementPolicyChoice::PreferColocation, "PREFER COLOCATION"),
            (PlacementPolicyChoice::Neutral, "NEUTRAL"),
            (
                PlacementPolicyChoice::SuggestSeparation,
                "SUGGEST SEPARATION",
            ),
        ]
        .into_iter()
        .map(|(v, l)| {
            choice(
                ChoiceValueT::PlacementPolicyVariant(Box::new(PlacementPolicyVariantT {
                    value: Some(v),
                })),
                l,
            )
        })
        .collect(),
        _ => Vec::new(),
    };
    let search = c.search.to_ascii_uppercase();
    let choices: Vec<ChoiceT> = all
        .into_iter()
        .filter(|ch| ch.presentation.label.contains(&search))
        .take(usize::from(c.page_size.max(1)))
        .collect();
    let summary = format!("ChoiceOutcome(Ready, {})", choices.len());
    Served::new(
        ReplyBodyT::ChoiceOutcome(Box::new(ChoiceOutcomeT {
            status: Some(ChoiceStatus::Ready),
            choices,
            page_cursor: None,
        })),
        summary,
    )
    .stage(CancellationStage::BeforeAdmission)
}
