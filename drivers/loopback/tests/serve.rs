//! `nervix-sim serve --endpoints FILE`: the endpoints a script reads are there, whole, once the
//! ports accept connections, and they are the lines the server prints.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the server however the test ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn port_of(url: &str) -> u16 {
    let rest = url.split("://").nth(1).unwrap();
    let authority = rest.split('/').next().unwrap();
    authority.rsplit(':').next().unwrap().parse().unwrap()
}

#[test]
fn serve_writes_its_endpoints_to_a_file_once_every_port_is_bound() {
    let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let file = dir.join(format!("endpoints-{}.txt", std::process::id()));
    let _ = std::fs::remove_file(&file);
    let mut server = Server(
        Command::new(env!("CARGO_BIN_EXE_nervix-sim"))
            .args(["serve", "--nodes", "3", "--endpoints"])
            .arg(&file)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let give_up = Instant::now() + Duration::from_secs(20);
    while !file.exists() {
        assert!(Instant::now() < give_up, "no endpoints file within 20 s");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The file appears whole (it is renamed into place): one line a node, and no part file.
    let text = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let mut part = file.clone().into_os_string();
    part.push(".part");
    assert!(!std::path::Path::new(&part).exists());
    for (i, line) in lines.iter().enumerate() {
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words.len(), 5, "{line}");
        assert_eq!(words[0], format!("node-{}", i + 1));
        assert_eq!((words[1], words[3]), ("grpc", "console"));
        assert!(words[4].ends_with("/console/ws"), "{line}");
        // Both ports accept a connection as soon as the file is there.
        for url in [words[2], words[4]] {
            let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port_of(url)));
            TcpStream::connect_timeout(&addr, Duration::from_secs(2))
                .unwrap_or_else(|e| panic!("{url}: {e}"));
        }
    }
    // What it printed, line for line.
    let mut out = BufReader::new(server.0.stdout.take().unwrap());
    for line in &lines {
        let mut printed = String::new();
        out.read_line(&mut printed).unwrap();
        assert_eq!(printed.trim_end(), *line);
    }
    let _ = std::fs::remove_file(&file);
}
