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
//! * `BACKUP` (a command of its own, outside a transaction; `DOMAIN <name>` backs up one
//!   domain, otherwise every domain) completes with a `backup` archive summary and is recorded
//!   like any admitted command. Its archive is downloaded once on a call of its own.
//! * The separate calls (resource uploads, archive downloads, restores) each run on a stream
//!   of their own: see [`SimCluster::open_call`].
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
//!   `SubscribeRequest` (exactly one statement `CREATE SUBSCRIPTION <name> FROM <relay>`; the
//!   generation counts up per name; the reply is followed by one `SubscriptionRows` frame),
//!   `UnsubscribeRequest`, `CancelRequest`,
//!   `AttachDomainClockRequest` and `DetachDomainClockRequest`, producers
//!   (`OpenIngestorRequest`, `SubmitBatchRequest`, `CloseIngestorRequest`) and emitter
//!   consumers (`OpenEmitterRequest`, `ReadEmitterBatchRequest`, `SettleEmitterBatchRequest`,
//!   `CloseEmitterRequest`). A submission's outcome and a read's delivery come later, from
//!   [`SimCluster::advance`]; the request stays in flight until then. Anything else is answered
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
//!
//! # Layout
//!
//! One module per server capability; this one holds the cluster itself (nodes, sessions, the
//! leader, the output queue, cancellation) and routes each admitted request to its capability:
//!
//! | module | what it serves |
//! |---|---|
//! | `commands` | `CommandRequest`: statement classification, the record of outcomes by execution reference, dispositions outside a transaction |
//! | `transactions` | `BEGIN`, appends, `COMMIT`, `REVERT`, bindings, `AttachTransactionRequest`, `InspectTransactionRequest`, expiry |
//! | `reads` | `ListDomainsRequest`, `SelectDomainRequest`, read commands, `SuggestRequest`, `ChoiceLookupRequest` |
//! | `subscriptions` | relays and their rows, `SubscribeRequest`, `UnsubscribeRequest`, delivery loss, skipped rows, relay changes |
//! | `clocks` | domain clocks and their ticks, `AttachDomainClockRequest`, `DetachDomainClockRequest` |
//! | `backups` | a `BACKUP` command, completed with its archive summary; the archive's download |
//! | `calls` | the separate calls' streams and their faults |
//! | `uploads` | resource uploads and installed versions |
//! | `restores` | restores with their step reports |
//! | `ingestors` | producers: credit, batch checks, outcomes, admission changes, `ProducerEnded` |
//! | `emitters` | emitter consumers: deliveries, attempts, settlements, acknowledgement timeouts, redelivery, the window |
//! | `transfers` | writing replies, split into transfer parts when large |
//! | `faults` | [`Faults`], the seeded draws and the malformed frames |

use bytes::Bytes;
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ClientFrame, ServerMessageRoot};
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use sansio_kit::rng::{mix, SplitMix64 as Rng};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt;

mod backups;
mod calls;
mod clocks;
mod commands;
mod emitters;
mod faults;
mod ingestors;
mod reads;
mod restores;
mod subscriptions;
mod transactions;
mod transfers;
mod uploads;

pub use backups::DOWNLOAD_CHUNK;
pub use calls::{CallFaults, CallId, CallKind, CallOutput};
pub use clocks::TICK_PERIOD;
pub use emitters::{
    delivery_ids, emitter_fields, token_number, ACK_TIMEOUT as EMITTER_ACK_TIMEOUT, EMITTER,
    EMIT_PERIOD, WINDOW as EMITTER_WINDOW,
};
pub use faults::Faults;
pub use ingestors::{
    ingestor_fields, BATCH_LATENCY, GRANT_BATCHES, GRANT_BYTES, INGESTOR, MAX_BATCH_BYTES,
    MAX_BATCH_ROWS, PRODUCER_PERIOD,
};
pub use subscriptions::{
    branch_key_values, is_branched, relay_schema, row_values, wide_columns, wide_row_values,
    Emitted, ROW_PERIOD,
};
pub use transactions::TRANSACTION_EXPIRY;

use commands::{command_outcome, completed, read_command, Record, Stmt};
use reads::{choices, suggest};
use transactions::{digest, Transaction, TxState};
use transfers::MAX_PART;

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
    /// The endpoints each node advertises, `(grpc_uri, web_console_uri)` in node order; a
    /// node without an entry advertises `https://node-<n>.sim:7443/` and
    /// `https://node-<n>.sim:8443/`. A server over real sockets puts its real ports here, so
    /// redirects name addresses a client can reach. Default: none.
    pub node_endpoints: Vec<(String, String)>,
    /// How often an open subscription receives a batch. Default [`ROW_PERIOD`].
    pub row_period: std::time::Duration,
    /// The most rows of one batch; each batch carries 1 to this many. Default 3.
    pub batch_rows: u64,
    /// The bytes each domain adds to a backup's archive (its three sections together); the
    /// archive is these and a 512-byte head. Default 3 KiB, so archives stay small unless a
    /// test or an example wants one large enough to watch.
    pub archive_domain_bytes: u64,
    /// Subscriptions are not paced: no batch is due on the clock, and a server takes the next
    /// batch of each open subscription with [`SimCluster::pull_rows`] whenever its socket has
    /// room, each of exactly [`ClusterConfig::batch_rows`] rows. Nothing is recorded per batch
    /// in this mode ([`SimCluster::emitted`] stays empty and the trace gains no line per batch),
    /// so memory stays flat however many rows flow. Default false.
    pub unpaced_rows: bool,
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
            node_endpoints: Vec::new(),
            row_period: ROW_PERIOD,
            batch_rows: 3,
            archive_domain_bytes: 3 * 1024,
            unpaced_rows: false,
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

#[derive(Debug)]
struct Node {
    name: String,
    endpoint: String,
    console: String,
    down: bool,
}

#[derive(Debug)]
struct Session {
    node: usize,
    open: bool,
    bound: Option<String>,
    last_transaction: Option<String>,
    taken_over: Option<String>,
    subscriptions: BTreeMap<String, subscriptions::OpenSubscription>,
    clocks: BTreeSet<String>,
    in_flight: BTreeSet<u64>,
    producers: BTreeMap<u64, ingestors::OpenProducer>,
    consumers: BTreeMap<u64, emitters::OpenConsumer>,
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
    /// No reply now: the request stays in flight and its reply comes later.
    deferred: bool,
    /// No reply at all: the stream is cut after serving.
    cut: bool,
}

impl Served {
    fn new(body: ReplyBodyT, summary: impl Into<String>) -> Self {
        Self {
            body,
            summary: summary.into(),
            stage: None,
            after: Vec::new(),
            deferred: false,
            cut: false,
        }
    }

    fn stage(mut self, stage: CancellationStage) -> Self {
        self.stage = Some(stage);
        self
    }
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
    generations: BTreeMap<String, u64>,
    emitted: BTreeMap<(String, u64), Vec<Emitted>>,
    relays: subscriptions::Relays,
    domain_clocks: BTreeMap<String, clocks::DomainClockSim>,
    contracts: BTreeMap<String, u64>,
    emitters: emitters::Emitters,
    misbehaviour: Vec<String>,
    /// The `id` columns of the batches ingested, in the order they completed.
    ingested: Vec<Vec<u64>>,
    out: VecDeque<Queued>,
    trace: Vec<String>,
    calls: calls::Calls,
}

impl SimCluster {
    /// A cluster built from `config`, with `node-1` leading and every node up.
    pub fn new(config: ClusterConfig) -> Self {
        let count = config.nodes.max(1);
        let nodes = (1..=count)
            .map(|i| {
                let (endpoint, console) = config.node_endpoints.get(i - 1).cloned().unwrap_or((
                    format!("https://node-{i}.sim:7443/"),
                    format!("https://node-{i}.sim:8443/"),
                ));
                Node {
                    name: format!("node-{i}"),
                    endpoint,
                    console,
                    down: false,
                }
            })
            .collect();
        let mut cluster = Self {
            part_size: config.part_size.clamp(1, MAX_PART),
            rng: Rng::new(config.seed),
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
            emitted: BTreeMap::new(),
            relays: subscriptions::Relays::default(),
            domain_clocks: BTreeMap::new(),
            contracts: BTreeMap::new(),
            emitters: emitters::Emitters::default(),
            misbehaviour: Vec::new(),
            ingested: Vec::new(),
            out: VecDeque::new(),
            trace: Vec::new(),
            calls: calls::Calls::default(),
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

    /// The nodes' console endpoints (`web_console_uri`) in node order:
    /// `https://node-1.sim:8443/`, ...
    pub fn console_endpoints(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.console.clone()).collect()
    }

    /// The index of the node whose `grpc_uri` or `web_console_uri` is `endpoint` (a trailing
    /// `/` is optional).
    pub fn node_of_endpoint(&self, endpoint: &str) -> Option<usize> {
        let wanted = endpoint.trim_end_matches('/');
        self.nodes.iter().position(|n| {
            n.endpoint.trim_end_matches('/') == wanted || n.console.trim_end_matches('/') == wanted
        })
    }

    /// Whether node `index` is down.
    pub fn is_down(&self, index: usize) -> bool {
        self.nodes.get(index).is_some_and(|n| n.down)
    }

    /// The number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
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
                producers: BTreeMap::new(),
                consumers: BTreeMap::new(),
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
        if served.cut {
            self.log(format!("{head} -> {}", served.summary));
            self.push(conn, Output::Close);
            self.drop_session(conn, false);
            return;
        }
        if served.deferred {
            if let Some(s) = self.sessions.get_mut(&conn) {
                s.in_flight.insert(id);
            }
            self.log(format!("{head} -> {}", served.summary));
            for m in served.after {
                self.push_unsolicited(conn, m);
            }
            return;
        }
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
    /// idle for [`TRANSACTION_EXPIRY`] expire and lose their binding, open subscriptions
    /// receive their batches (one per [`ClusterConfig::row_period`]), and paced domain clocks tick (one per
    /// [`TICK_PERIOD`]) to the sessions attached to them, admitted batches get their
    /// outcomes, producers' admission changes and ends run, unsettled attempts past their
    /// acknowledgement timeout go again, and waiting reads receive deliveries.
    pub fn advance(&mut self, now: Timestamp) {
        self.tick(now);
        self.emit_rows();
        self.run_clocks();
        self.run_producers();
        self.run_emitters();
    }

    /// When [`SimCluster::advance`] next has something to send on its own: a subscription's
    /// batch or a tick of a clock some session is attached to.
    pub fn next_due(&self) -> Option<Timestamp> {
        let open = || self.sessions.values().filter(|s| s.open);
        let paced = !self.config.unpaced_rows;
        let rows = open()
            .filter(move |_| paced)
            .flat_map(|s| s.subscriptions.values().map(|o| o.next_emit));
        let ticks = self
            .domain_clocks
            .iter()
            .filter(|(d, _)| open().any(|s| s.clocks.contains(*d)))
            .map(|(_, c)| c.next_tick);
        let attached_fresh = open()
            .flat_map(|s| s.clocks.iter())
            .filter(|d| !self.domain_clocks.contains_key(*d))
            .map(|_| self.now);
        rows.chain(ticks)
            .chain(attached_fresh)
            .chain(self.producers_due())
            .chain(self.emitters_due())
            .min()
    }

    /// The outcome recorded under an execution reference, if the command was admitted: what
    /// a repeat of it is answered with. Simulation checks compare what a client reported with
    /// this record.
    pub fn recorded_outcome(&self, reference: &str) -> Option<&CommandOutcomeT> {
        self.records.get(reference).map(|r| &r.outcome)
    }

    /// What the cluster sent for generation `generation` of subscription `name`, in order:
    /// its row batches and, in their place, the rows it dropped or skipped. A stream delivers
    /// a prefix of it (the rest may be lost with the stream).
    pub fn emitted(&self, name: &str, generation: u64) -> &[Emitted] {
        self.emitted
            .get(&(name.to_string(), generation))
            .map_or(&[][..], Vec::as_slice)
    }

    /// One line per thing the cluster did, in order.
    pub fn trace(&self) -> &[String] {
        &self.trace
    }

    /// What clients did that a client must never do, one line each: a batch beyond its
    /// producer's granted credit, a second settlement of one delivery attempt.
    pub fn misbehaviour(&self) -> &[String] {
        &self.misbehaviour
    }

    /// The `id` columns of the batches the ingestor took in (those it answered completed,
    /// whether or not the answer reached the client), in the order they completed.
    pub fn ingested(&self) -> &[Vec<u64>] {
        &self.ingested
    }

    /// Records a batch of `ids` as ingested, for tests of the checks against the record.
    #[cfg(test)]
    pub(crate) fn record_ingested(&mut self, ids: Vec<u64>) {
        self.ingested.push(ids);
    }

    // ----- internals -----

    fn log(&mut self, line: String) {
        self.trace.push(format!("{} {line}", fmt_time(self.now)));
    }

    fn tick(&mut self, now: Timestamp) {
        if now > self.now {
            self.now = now;
        }
        self.expire_transactions();
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
        s.producers.clear();
        self.release_consumers(conn);
        let tx = self.unbind(conn)?;
        if clean {
            if let Some(t) = self.transactions.get_mut(&tx) {
                t.state = TxState::Reverted;
            }
        }
        Some(tx)
    }

    /// Routes one admitted request to the capability that serves it.
    ///
    /// Each capability lives in its own module: `commands` (command execution and the record of
    /// outcomes by execution reference), `transactions` (binding, appends, commit, revert,
    /// attach, inspection, expiry), `reads` (domains, follower-served read commands,
    /// suggestions, choice lookups), `subscriptions`, `clocks` and `backups` (the summary of a
    /// completed `BACKUP` command), `ingestors` (producers) and `emitters` (consumers).
    /// Resource uploads, archive downloads and restores are separate calls with streams of
    /// their own (`calls`, `uploads`, `backups`, `restores`), not session requests; anything
    /// not served here is answered `UnsupportedRequest`.
    fn serve(&mut self, conn: ConnId, node: usize, id: u64, request: ClientRequestT) -> Served {
        match request {
            ClientRequestT::CommandRequest(c) => self.command(conn, node, *c),
            ClientRequestT::AttachTransactionRequest(a) => {
                self.attach_request(conn, node, &a.transaction_id)
            }
            ClientRequestT::InspectTransactionRequest(i) => self.inspect_request(conn, node, &i),
            ClientRequestT::ListDomainsRequest(_) => self.list_domains(),
            ClientRequestT::SelectDomainRequest(s) => self.select(&s.domain),
            ClientRequestT::SuggestRequest(s) => suggest(&s),
            ClientRequestT::ChoiceLookupRequest(c) => choices(&c),
            ClientRequestT::SubscribeRequest(s) => self.subscribe(conn, &s),
            ClientRequestT::UnsubscribeRequest(u) => self.unsubscribe(conn, &u.subscription),
            ClientRequestT::CancelRequest(c) => self.cancel(conn, id, c.target_request_id),
            ClientRequestT::AttachDomainClockRequest(d) => self.clock_attach(conn, &d.domain),
            ClientRequestT::DetachDomainClockRequest(d) => self.clock_detach(conn, &d.domain),
            ClientRequestT::OpenIngestorRequest(r) => self.open_ingestor(conn, id, &r),
            ClientRequestT::SubmitBatchRequest(r) => self.submit_batch(conn, id, &r),
            ClientRequestT::CloseIngestorRequest(r) => self.close_ingestor(conn, r.producer),
            ClientRequestT::OpenEmitterRequest(r) => self.open_emitter(conn, id, &r),
            ClientRequestT::ReadEmitterBatchRequest(r) => self.read_emitter(conn, id, r.consumer),
            ClientRequestT::SettleEmitterBatchRequest(r) => self.settle_emitter(conn, &r),
            ClientRequestT::CloseEmitterRequest(r) => self.close_emitter(conn, r.consumer),
            _ => rejected(
                RequestRejection::UnsupportedRequest,
                None,
                "the simulated cluster does not serve this request",
            ),
        }
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
}

fn redirect_summary(leader: &Option<Box<LeaderEndpointsT>>) -> String {
    format!(
        "LeaderRedirect({})",
        leader.as_ref().map_or("no leader", |l| l.node.as_str())
    )
}
