//! Log lines in the form the GAR reference client writes them (G-65):
//! `YYYY-MM-DD HH:MM:SS.mmm LEVEL:<name>:<message>`, in local time.
//!
//! [`line()`] writes one such line from its parts and is what the formatter uses. With the
//! `log-lines` feature, `LogLines` is a `tracing_subscriber::fmt` event formatter that
//! writes every event of the application's subscriber that way: the name is the event's
//! target (e.g. `gar_driver::tokio`), the message its fields. Rust's standard library does not
//! know the machine's time zone, so local time is the UTC offset the application gives
//! (`LogLines::with_utc_offset`, from whatever time library it uses); without one the lines
//! are in UTC.

use std::fmt::Write as _;

/// A moment split into its calendar parts (proleptic Gregorian), already shifted to the
/// offset it is meant to be read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CivilTime {
    /// The year (e.g. 2025).
    pub year: i64,
    /// 1 to 12.
    pub month: u32,
    /// 1 to 31.
    pub day: u32,
    /// 0 to 23.
    pub hour: u32,
    /// 0 to 59.
    pub minute: u32,
    /// 0 to 59.
    pub second: u32,
    /// 0 to 999.
    pub millis: u32,
}

impl CivilTime {
    /// The calendar parts of `unix_millis` (milliseconds since 1970-01-01 00:00:00 UTC, before
    /// it when negative) read at `utc_offset_secs` east of UTC.
    #[must_use]
    pub fn from_unix_millis(unix_millis: i64, utc_offset_secs: i32) -> Self {
        let local = unix_millis + i64::from(utc_offset_secs) * 1000;
        let days = local.div_euclid(86_400_000);
        let in_day = local.rem_euclid(86_400_000);
        let (year, month, day) = date_of_day(days);
        // Each part is below its bound (a day has 86,400,000 ms), so the casts cannot truncate.
        let part = |v: i64| u32::try_from(v).unwrap_or(0);
        CivilTime {
            year,
            month,
            day,
            hour: part(in_day / 3_600_000),
            minute: part(in_day / 60_000 % 60),
            second: part(in_day / 1000 % 60),
            millis: part(in_day % 1000),
        }
    }
}

/// The Gregorian date of the day `days` after 1970-01-01. Counts in eras of 400 years
/// (146,097 days), which repeat exactly, with years starting on 1 March so the leap day
/// is the last day of its year.
fn date_of_day(days: i64) -> (i64, u32, u32) {
    const ERA_DAYS: i64 = 146_097;
    // Day 0 of era 0 is 0000-03-01, which is 719,468 days before 1970-01-01.
    let z = days + 719_468;
    let era = z.div_euclid(ERA_DAYS);
    let day_of_era = z.rem_euclid(ERA_DAYS);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / (ERA_DAYS - 1)) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months from March: 31, 30, 31, 30, 31, 31, 30, 31, 30, 31, 31, 28/29; 153 days per five.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

/// The level word a line carries for a tracing level: the reference client's words
/// (`WARNING`, not `WARN`); `TRACE` has no counterpart there and keeps its own name.
#[must_use]
pub fn level_word(level: tracing::Level) -> &'static str {
    match level {
        tracing::Level::ERROR => "ERROR",
        tracing::Level::WARN => "WARNING",
        tracing::Level::INFO => "INFO",
        tracing::Level::DEBUG => "DEBUG",
        tracing::Level::TRACE => "TRACE",
    }
}

/// One log line, without its line end: `YYYY-MM-DD HH:MM:SS.mmm LEVEL:<name>:<message>`.
#[must_use]
pub fn line(at: &CivilTime, level: &str, name: &str, message: &str) -> String {
    let mut out = String::with_capacity(32 + level.len() + name.len() + message.len());
    let _ = write!(
        out,
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} {level}:{name}:{message}",
        at.year, at.month, at.day, at.hour, at.minute, at.second, at.millis
    );
    out
}

#[cfg(feature = "log-lines")]
pub use lines::LogLines;

#[cfg(feature = "log-lines")]
mod lines {
    use std::fmt;
    use std::time::{SystemTime, UNIX_EPOCH};

    use tracing::{Event, Subscriber};
    use tracing_subscriber::fmt::format::Writer;
    use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
    use tracing_subscriber::registry::LookupSpan;

    use super::{level_word, line, CivilTime};

    /// A `tracing_subscriber::fmt` event formatter writing the reference client's log lines:
    /// `tracing_subscriber::fmt().event_format(LogLines::with_utc_offset(3600)).init()`.
    #[derive(Debug, Clone, Copy, Default)]
    pub struct LogLines {
        utc_offset_secs: i32,
    }

    impl LogLines {
        /// Lines in UTC.
        #[must_use]
        pub fn utc() -> Self {
            LogLines { utc_offset_secs: 0 }
        }

        /// Lines in the local time `utc_offset_secs` east of UTC.
        #[must_use]
        pub fn with_utc_offset(utc_offset_secs: i32) -> Self {
            LogLines { utc_offset_secs }
        }
    }

    impl<S, N> FormatEvent<S, N> for LogLines
    where
        S: Subscriber + for<'a> LookupSpan<'a>,
        N: for<'a> FormatFields<'a> + 'static,
    {
        fn format_event(
            &self,
            ctx: &FmtContext<'_, S, N>,
            mut writer: Writer<'_>,
            event: &Event<'_>,
        ) -> fmt::Result {
            let millis = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            let meta = event.metadata();
            let mut message = String::new();
            ctx.field_format()
                .format_fields(Writer::new(&mut message), event)?;
            let at = CivilTime::from_unix_millis(millis, self.utc_offset_secs);
            writeln!(
                writer,
                "{}",
                line(&at, level_word(*meta.level()), meta.target(), &message)
            )
        }
    }
}
