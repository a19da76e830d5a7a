//! The write_admitted messageId rule (W-3 to W-5) and the blank test (W-28), on the Unicode 16.0
//! tables embedded in this crate (never the platform's own Unicode data).

use crate::unicode_tables::{DEFAULT_IGNORABLE, LETTER_OR_NUMBER, WHITE_SPACE};

pub use crate::unicode_tables::UNICODE_VERSION;

/// Whether `c` falls in one of the sorted, disjoint inclusive `ranges` (binary search).
fn in_table(ranges: &[(u32, u32)], c: u32) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// Whether `c` is a letter or number: General_Category Lu, Ll, Lt, Lm, Lo, Nd, Nl or No.
#[must_use]
pub fn is_letter_or_number(c: char) -> bool {
    in_table(LETTER_OR_NUMBER, u32::from(c))
}

/// Whether `c` has Default_Ignorable_Code_Point.
#[must_use]
pub fn is_default_ignorable(c: char) -> bool {
    in_table(DEFAULT_IGNORABLE, u32::from(c))
}

/// Whether `c` has White_Space (the PropList property, not the platform's whitespace test).
#[must_use]
pub fn is_white_space(c: char) -> bool {
    in_table(WHITE_SPACE, u32::from(c))
}

/// Whether `id` may be the messageId of a write_admitted frame: at least one letter or number
/// and no Default_Ignorable code point. The test is on the raw string: nothing is trimmed or
/// normalized, and it is not a White_Space test. A Rust `str` is well-formed Unicode, so a lone
/// surrogate cannot reach it: the frame reader refuses the invalid UTF-8 first.
#[must_use]
pub fn is_valid_admitted_message_id(id: &str) -> bool {
    let mut has_letter_or_number = false;
    for c in id.chars() {
        if is_default_ignorable(c) {
            return false;
        }
        has_letter_or_number |= is_letter_or_number(c);
    }
    has_letter_or_number
}

/// Whether `s` names nothing: empty, or made only of White_Space code points.
#[must_use]
pub fn is_blank(s: &str) -> bool {
    s.chars().all(is_white_space)
}

/// The three embedded tables as inclusive code point ranges, for probes and vectors.
#[must_use]
pub fn tables() -> [(&'static str, &'static [(u32, u32)]); 3] {
    [
        ("letterOrNumber", LETTER_OR_NUMBER),
        ("defaultIgnorable", DEFAULT_IGNORABLE),
        ("whiteSpace", WHITE_SPACE),
    ]
}
