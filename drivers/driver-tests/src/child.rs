//! The client processes of the journal tests: this test binary run again as one ignored test,
//! told what to do in one environment variable, killed with SIGKILL by its parent.
//!
//! What every child is told starts the same way ([`Head`]: transport, journal directory,
//! trusted certificate, seeds, one a line); each kind of child adds lines of its own after.
//! The steps the children share are here too: submitting commands or batches and printing a
//! line for each ([`submit_commands`], [`submit_batches`]), waiting for the parent's word to go
//! on ([`told_to_go`]), and waiting to be killed ([`until_killed`]).

use crate::dataplane::batch_of;
use crate::{Driver, Via};
use std::io::{BufRead, BufReader};
use std::ops::Range;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// What every child is told first.
#[derive(Debug, Clone)]
pub(crate) struct Head {
    /// The transport.
    pub via: Via,
    /// The directory the child works in (its journal's, or the one holding it).
    pub dir: PathBuf,
    /// The trusted certificate's file, when the cluster serves TLS.
    pub cert: Option<PathBuf>,
    /// The cluster's endpoints.
    pub seeds: Vec<String>,
}

impl Head {
    /// The text of the head and then `extra`, one value a line.
    pub(crate) fn encode(&self, extra: &[String]) -> String {
        let via = match self.via {
            Via::Grpc => "grpc",
            Via::Console(_) => "console",
        };
        let cert = self
            .cert
            .as_ref()
            .map_or_else(|| "-".to_string(), |c| c.display().to_string());
        let mut lines = vec![
            via.to_string(),
            self.dir.display().to_string(),
            cert,
            self.seeds.join(" "),
        ];
        lines.extend(extra.iter().cloned());
        lines.join("\n")
    }

    /// The head of `text`, and the lines after it.
    pub(crate) fn decode(text: &str) -> (Head, Vec<String>) {
        let mut l = text.lines();
        let via = match l.next().unwrap() {
            "grpc" => Via::Grpc,
            _ => Via::Console(nervix_driver_support::credentials::WsAuth::Header),
        };
        let dir = PathBuf::from(l.next().unwrap());
        let cert = match l.next().unwrap() {
            "-" => None,
            c => Some(PathBuf::from(c)),
        };
        let seeds = l.next().unwrap().split(' ').map(str::to_string).collect();
        let head = Head {
            via,
            dir,
            cert,
            seeds,
        };
        (head, l.map(str::to_string).collect())
    }

    /// What the environment variable `var` tells this process, which is the child `what`.
    pub(crate) fn from_env(var: &str, what: &str) -> (Head, Vec<String>) {
        let Ok(text) = std::env::var(var) else {
            panic!("{var} is not set: this test is {what}");
        };
        Self::decode(&text)
    }
}

/// A running child: killed (and waited for) when dropped, so a parent that fails midway leaves
/// none behind; its standard output comes line by line through `lines`.
pub(crate) struct Running {
    pub child: Child,
    /// Its standard input, when it was asked for.
    pub stdin: Option<ChildStdin>,
    /// What it prints, a line at a time.
    pub lines: mpsc::Receiver<String>,
}

impl Running {
    /// Kills it with SIGKILL and waits for it.
    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `program` with `args` and `var` set to `told`; `stdin` says whether the parent
/// writes to it.
pub(crate) fn spawn(
    program: &std::path::Path,
    args: &[String],
    var: &str,
    told: String,
    stdin: bool,
) -> Running {
    let mut child = Command::new(program)
        .args(args)
        .env(var, told)
        .stdin(if stdin { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = child.stdout.take().unwrap();
    let stdin = child.stdin.take();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    Running {
        child,
        stdin,
        lines,
    }
}

/// The arguments that run only the ignored test `test` of this test binary.
pub(crate) fn test_args(test: &str) -> Vec<String> {
    [
        "--exact",
        test,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect()
}

/// This test binary.
pub(crate) fn this_binary() -> PathBuf {
    std::env::current_exe().expect("the test binary's path")
}

/// Submits `count` commands on `client`, each creating the relay `{relay}_{i}`, and prints
/// `SUBMITTED <reference>` after each. Gives them, in order.
pub(crate) fn submit_commands<D: Driver>(
    d: &D,
    client: &D::Client,
    count: usize,
    relay: &str,
) -> Vec<D::Pending> {
    let mut pending = Vec::new();
    for i in 0..count {
        let p = d
            .submit(client, &format!("CREATE RELAY {relay}_{i};"))
            .unwrap();
        println!("SUBMITTED {}", D::reference(&p));
        pending.push(p);
    }
    pending
}

/// Submits one batch of each id of `ids` on `producer`, in order, and prints `{label} <id>`
/// after each. Gives them, in order.
pub(crate) fn submit_batches<D: Driver>(
    d: &D,
    producer: &D::Producer,
    ids: Range<u64>,
    label: &str,
) -> Vec<D::Batch> {
    let mut batches = Vec::new();
    for id in ids {
        batches.push(
            d.submit_batch(producer, batch_of::<D>(producer, &[id]))
                .unwrap(),
        );
        println!("{label} {id}");
    }
    batches
}

/// Waits for one line from standard input: the parent's word to go on.
pub(crate) fn told_to_go() {
    let mut line = String::new();
    std::io::stdin().read_line(&mut line).unwrap();
}

/// Waits to be killed, at most a minute; `what` (the child) was not killed if it returns.
pub(crate) fn until_killed(what: &str) -> ! {
    std::thread::sleep(Duration::from_secs(60));
    panic!("{what} was not killed");
}
