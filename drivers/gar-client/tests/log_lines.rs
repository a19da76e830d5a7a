//! G-65: log lines `YYYY-MM-DD HH:MM:SS.mmm LEVEL:<name>:<message>` in local time.

use gar_driver::log::{level_word, line, CivilTime};

fn at(ms: i64, offset: i32) -> String {
    line(&CivilTime::from_unix_millis(ms, offset), "INFO", "gar", "m")
}

#[test]
fn g_65_a_line_is_date_time_millis_level_name_and_message() {
    // 2025-04-23 16:28:13.895 UTC (the seed's heartbeat stamp 1745425693895).
    let t = CivilTime::from_unix_millis(1_745_425_693_895, 0);
    assert_eq!(
        line(&t, "WARNING", "gar_driver::tokio", "heartbeat late"),
        "2025-04-23 16:28:13.895 WARNING:gar_driver::tokio:heartbeat late"
    );
    // Every field zero-padded to its width.
    assert_eq!(at(0, 0), "1970-01-01 00:00:00.000 INFO:gar:m");
    assert_eq!(
        at(1_000_000_000_007, 0),
        "2001-09-09 01:46:40.007 INFO:gar:m"
    );
}

#[test]
fn g_65_local_time_is_the_given_offset_from_utc() {
    let ms = 1_745_425_693_895;
    assert_eq!(at(ms, 2 * 3600), "2025-04-23 18:28:13.895 INFO:gar:m");
    assert_eq!(at(ms, -5 * 3600), "2025-04-23 11:28:13.895 INFO:gar:m");
    // An offset that crosses midnight and the new year moves the date with it.
    let new_year_utc = 1_767_225_600_000; // 2026-01-01 00:00:00 UTC
    assert_eq!(
        at(new_year_utc - 1, 0),
        "2025-12-31 23:59:59.999 INFO:gar:m"
    );
    assert_eq!(
        at(new_year_utc - 1, 3600),
        "2026-01-01 00:59:59.999 INFO:gar:m"
    );
    assert_eq!(
        at(new_year_utc, -1800),
        "2025-12-31 23:30:00.000 INFO:gar:m"
    );
}

#[test]
fn g_65_dates_follow_the_gregorian_leap_rules() {
    // 2024-02-29 exists; 2100 is not a leap year; 2000 is.
    assert_eq!(
        at(1_709_164_800_000, 0),
        "2024-02-29 00:00:00.000 INFO:gar:m"
    );
    assert_eq!(
        at(1_709_251_200_000, 0),
        "2024-03-01 00:00:00.000 INFO:gar:m"
    );
    assert_eq!(
        at(4_107_456_000_000, 0),
        "2100-02-28 00:00:00.000 INFO:gar:m"
    );
    assert_eq!(
        at(4_107_542_400_000, 0),
        "2100-03-01 00:00:00.000 INFO:gar:m"
    );
    assert_eq!(at(951_782_400_000, 0), "2000-02-29 00:00:00.000 INFO:gar:m");
    // Before 1970 too.
    assert_eq!(at(-1, 0), "1969-12-31 23:59:59.999 INFO:gar:m");
    // Every day of four centuries round-trips against a day counter kept by hand.
    let (mut y, mut m, mut d) = (1970i64, 1u32, 1u32);
    for day in 0..146_097i64 {
        let t = CivilTime::from_unix_millis(day * 86_400_000 + 43_200_000, 0);
        assert_eq!((t.year, t.month, t.day), (y, m, d), "day {day}");
        let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
        let len = [
            31,
            if leap { 29 } else { 28 },
            31,
            30,
            31,
            30,
            31,
            31,
            30,
            31,
            30,
            31,
        ];
        d += 1;
        if d > len[m as usize - 1] {
            d = 1;
            m += 1;
            if m > 12 {
                m = 1;
                y += 1;
            }
        }
    }
}

#[test]
fn g_65_levels_use_the_reference_clients_words() {
    use tracing::Level;
    assert_eq!(level_word(Level::ERROR), "ERROR");
    assert_eq!(level_word(Level::WARN), "WARNING");
    assert_eq!(level_word(Level::INFO), "INFO");
    assert_eq!(level_word(Level::DEBUG), "DEBUG");
    assert_eq!(level_word(Level::TRACE), "TRACE");
}

#[cfg(feature = "log-lines")]
#[test]
fn g_65_the_formatter_writes_each_event_as_one_such_line() {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Sink(Arc<Mutex<Vec<u8>>>);
    impl Write for Sink {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let sink = Sink::default();
    let out = sink.clone();
    let subscriber = tracing_subscriber::fmt()
        .event_format(gar_driver::log::LogLines::with_utc_offset(3600))
        .with_writer(move || out.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        tracing::warn!(target: "gar_driver::tokio", "heartbeat late");
        tracing::info!(target: "gar_driver::blocking", stop = "Stop", "session stopped");
    });
    let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    for l in &lines {
        let (stamp, rest) = l.split_at(23);
        let b = stamp.as_bytes();
        assert!(
            b.iter().enumerate().all(|(i, c)| match i {
                4 | 7 => *c == b'-',
                10 => *c == b' ',
                13 | 16 => *c == b':',
                19 => *c == b'.',
                _ => c.is_ascii_digit(),
            }),
            "{l}"
        );
        assert!(rest.starts_with(' '), "{l}");
    }
    assert!(
        lines[0].ends_with(" WARNING:gar_driver::tokio:heartbeat late"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].ends_with(" INFO:gar_driver::blocking:session stopped stop=\"Stop\""),
        "{}",
        lines[1]
    );
}
