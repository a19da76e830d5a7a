//! [`ProgressLine`]: a transfer's progress shown to a person, as one line redrawn in place on a
//! terminal and as plain lines anywhere else (a log, a pipe, a CI run).

use nervix_protocol::calls::Progress;
use std::io::{IsTerminal, Stdout, Write};

/// The width of the bar drawn on a terminal, in characters.
const BAR: usize = 30;
/// Where the plain form writes a line: at each quarter of an attempt.
const QUARTERS: u64 = 4;

/// Shows a transfer's [`Progress`] as it comes.
///
/// On a terminal it is one line, `label [#####.....]  42%  13.4 of 32.0 MiB`, redrawn in place
/// (a carriage return, no new line) only when the shown percentage or the attempt changes. A
/// restart ends the line with a note saying how far the cut attempt came, and the next attempt
/// gets a line of its own. Anywhere else (`terminal` false) it writes plain lines: when an
/// attempt starts, at each quarter, and when the whole archive moved, so a log records restarts
/// too without filling up. Nothing is written twice for the same state; write errors are
/// ignored (progress is a courtesy, never the transfer's failure).
pub struct ProgressLine<W: Write> {
    /// Always `Some` but while [`ProgressLine::into_inner`] hands it back.
    out: Option<W>,
    label: String,
    terminal: bool,
    last: Option<Progress>,
    /// On a terminal: the percentage last drawn; otherwise the quarter last written.
    step: u64,
    /// A line is open on the terminal (drawn without its new line).
    open: bool,
}

impl ProgressLine<Stdout> {
    /// A line on standard output, redrawn in place when it is a terminal.
    pub fn stdout(label: impl Into<String>) -> Self {
        let out = std::io::stdout();
        let terminal = out.is_terminal();
        Self::new(out, label, terminal)
    }
}

impl<W: Write> ProgressLine<W> {
    /// A line written to `out`, headed `label`; `terminal` says whether it may be redrawn in
    /// place.
    pub fn new(out: W, label: impl Into<String>, terminal: bool) -> Self {
        Self {
            out: Some(out),
            label: label.into(),
            terminal,
            last: None,
            step: 0,
            open: false,
        }
    }

    /// Shows `p`.
    pub fn show(&mut self, p: Progress) {
        let restart = self.last.is_some_and(|l| p.attempt != l.attempt);
        if restart {
            let (cut_attempt, cut) = self.last.map_or((0, 0), |l| (l.attempt, l.done));
            self.end_line();
            let note = format!(
                "{}: attempt {} ended after {}; attempt {} starts again from the first byte",
                self.label,
                cut_attempt,
                size(cut),
                p.attempt
            );
            self.put_line(&note);
        }
        let first = self.last.is_none() || restart;
        self.last = Some(p);
        if self.terminal {
            let percent = percent(p);
            if first || percent != self.step {
                self.step = percent;
                self.draw(p);
            }
        } else {
            let quarter = p.done.min(p.total) * QUARTERS / p.total.max(1);
            if first {
                self.step = quarter;
                self.put_line(&format!(
                    "{}: attempt {}, {} to move",
                    self.label,
                    p.attempt,
                    size(p.total)
                ));
            } else if quarter > self.step {
                self.step = quarter;
                self.put_line(&format!(
                    "{}: {}% ({} of {})",
                    self.label,
                    percent(p),
                    size(p.done),
                    size(p.total)
                ));
            }
        }
        let _ = self.w().flush();
    }

    /// Ends the display: closes the line left open on a terminal.
    pub fn finish(&mut self) {
        self.end_line();
        let _ = self.w().flush();
    }

    /// Ends the display and gives back what it wrote to.
    pub fn into_inner(mut self) -> W {
        self.finish();
        self.out.take().expect("the writer is taken only here")
    }

    fn put(&mut self, text: &str) {
        let _ = self.w().write_all(text.as_bytes());
    }

    fn put_line(&mut self, text: &str) {
        self.put(text);
        self.put("\n");
    }

    /// The writer: there until [`ProgressLine::into_inner`] takes it with the line itself.
    fn w(&mut self) -> &mut W {
        self.out
            .as_mut()
            .expect("the writer is taken only with the line")
    }

    fn draw(&mut self, p: Progress) {
        let filled = (p.fraction() * BAR as f64) as usize;
        let bar: String = (0..BAR)
            .map(|i| if i < filled { '#' } else { '.' })
            .collect();
        self.put(&format!(
            "\r{} [{}] {:>3}%  {} of {}",
            self.label,
            bar,
            percent(p),
            size(p.done),
            size(p.total)
        ));
        if p.attempt > 1 {
            self.put(&format!("  (attempt {})", p.attempt));
        }
        self.open = true;
    }

    fn end_line(&mut self) {
        if self.open {
            self.put("\n");
            self.open = false;
        }
    }
}

impl<W: Write> Drop for ProgressLine<W> {
    fn drop(&mut self) {
        if self.out.is_some() {
            self.finish();
        }
    }
}

/// The whole percentage of `p`, 0 to 100.
fn percent(p: Progress) -> u64 {
    p.done.min(p.total) * 100 / p.total.max(1)
}

/// `n` bytes for a person: bytes, KiB or MiB with one decimal.
fn size(n: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * 1024;
    if n >= MIB {
        format!("{:.1} MiB", n as f64 / MIB as f64)
    } else if n >= KIB {
        format!("{:.1} KiB", n as f64 / KIB as f64)
    } else {
        format!("{n} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: u64 = 1024 * 1024;

    fn shown(terminal: bool, reports: &[(u32, u64)], total: u64) -> String {
        let mut line = ProgressLine::new(Vec::new(), "download", terminal);
        for &(attempt, done) in reports {
            line.show(Progress::new(attempt, done, total));
        }
        String::from_utf8(line.into_inner()).unwrap()
    }

    #[test]
    fn progress_line_off_a_terminal_writes_plain_lines_at_each_quarter_and_each_restart() {
        let steps: Vec<(u32, u64)> = (0..=40).map(|i| (1, i * MIB / 10)).collect();
        let mut reports = steps[..15].to_vec();
        reports.extend(steps.iter().map(|&(_, d)| (2, d)));
        let out = shown(false, &reports, 4 * MIB);
        assert_eq!(
            out,
            "download: attempt 1, 4.0 MiB to move\n\
             download: 25% (1.0 MiB of 4.0 MiB)\n\
             download: attempt 1 ended after 1.4 MiB; attempt 2 starts again from the first byte\n\
             download: attempt 2, 4.0 MiB to move\n\
             download: 25% (1.0 MiB of 4.0 MiB)\n\
             download: 50% (2.0 MiB of 4.0 MiB)\n\
             download: 75% (3.0 MiB of 4.0 MiB)\n\
             download: 100% (4.0 MiB of 4.0 MiB)\n"
        );
        assert!(!out.contains('\r'));
    }

    #[test]
    fn progress_line_on_a_terminal_redraws_one_line_per_attempt_only_when_the_percentage_moves() {
        // A thousand reports of one attempt: at most 101 draws (0% to 100%), one line.
        let reports: Vec<(u32, u64)> = (0..=1000).map(|i| (1, i * 1000)).collect();
        let out = shown(true, &reports, 1_000_000);
        assert_eq!(out.matches('\r').count(), 101);
        assert_eq!(out.matches('\n').count(), 1);
        assert!(out.ends_with(
            "\rdownload [##############################] 100%  976.6 KiB of 976.6 KiB\n"
        ));
        assert!(
            out.starts_with("\rdownload [..............................]   0%  0 B of 976.6 KiB\r")
        );
    }

    #[test]
    fn progress_line_on_a_terminal_shows_a_restart_on_a_line_of_its_own() {
        let out = shown(true, &[(1, 0), (1, 500), (2, 0), (2, 1000)], 1000);
        let lines: Vec<&str> = out.split('\n').collect();
        assert_eq!(lines.len(), 4, "{out:?}");
        assert!(
            lines[0].ends_with("\rdownload [###############...............]  50%  500 B of 1000 B")
        );
        assert_eq!(
            lines[1],
            "download: attempt 1 ended after 500 B; attempt 2 starts again from the first byte"
        );
        assert!(
            lines[2].ends_with("100%  1000 B of 1000 B  (attempt 2)"),
            "{out:?}"
        );
        assert_eq!(lines[3], "");
    }

    #[test]
    fn progress_line_dropped_on_a_terminal_closes_its_open_line() {
        let mut out = Vec::new();
        {
            let mut line = ProgressLine::new(&mut out, "restore", true);
            line.show(Progress::new(1, 10, 100));
        }
        let out = String::from_utf8(out).unwrap();
        assert!(out.ends_with("10%  10 B of 100 B\n"), "{out:?}");
        assert_eq!(out.matches('\n').count(), 1);
    }

    #[test]
    fn progress_line_sizes_read_as_a_person_would() {
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(1024), "1.0 KiB");
        assert_eq!(size(MIB - 1), "1024.0 KiB");
        assert_eq!(size(MIB), "1.0 MiB");
        assert_eq!(size(32 * MIB + MIB / 2), "32.5 MiB");
    }
}
