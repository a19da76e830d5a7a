//! The name filters of a subscription: a small regular-expression subset, searched anywhere in
//! the name unless anchored. Supported: literals, `.`, `*`, `+`, `?` after one atom, `^` and
//! `$` anchors, and `\` to take the next character literally. Anything else is a literal.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Atom {
    Any,
    Char(char),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rep {
    One,
    ZeroOrMore,
    OneOrMore,
    ZeroOrOne,
}

/// A compiled filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    parts: Vec<(Atom, Rep)>,
    start: bool,
    end: bool,
}

impl Filter {
    /// Compiles `pattern`; every pattern compiles (an unknown construct is a literal).
    #[must_use]
    pub fn new(pattern: &str) -> Self {
        let mut chars: Vec<char> = pattern.chars().collect();
        let start = chars.first() == Some(&'^');
        if start {
            chars.remove(0);
        }
        let end =
            chars.last() == Some(&'$') && !(chars.len() >= 2 && chars[chars.len() - 2] == '\\');
        if end {
            chars.pop();
        }
        let mut parts = Vec::new();
        let mut i = 0;
        while i < chars.len() {
            let atom = match chars[i] {
                '\\' if i + 1 < chars.len() => {
                    i += 1;
                    Atom::Char(chars[i])
                }
                '.' => Atom::Any,
                c => Atom::Char(c),
            };
            i += 1;
            let rep = match chars.get(i) {
                Some('*') => Rep::ZeroOrMore,
                Some('+') => Rep::OneOrMore,
                Some('?') => Rep::ZeroOrOne,
                _ => Rep::One,
            };
            if rep != Rep::One {
                i += 1;
            }
            parts.push((atom, rep));
        }
        Filter { parts, start, end }
    }

    /// Whether `name` matches.
    #[must_use]
    pub fn matches(&self, name: &str) -> bool {
        let text: Vec<char> = name.chars().collect();
        if self.start {
            return self.at(&text, 0, 0);
        }
        (0..=text.len()).any(|s| self.at(&text, s, 0))
    }

    fn at(&self, text: &[char], pos: usize, part: usize) -> bool {
        let Some(&(atom, rep)) = self.parts.get(part) else {
            return !self.end || pos == text.len();
        };
        let hit = |p: usize| {
            text.get(p)
                .is_some_and(|c| atom == Atom::Any || atom == Atom::Char(*c))
        };
        match rep {
            Rep::One => hit(pos) && self.at(text, pos + 1, part + 1),
            Rep::ZeroOrOne => {
                (hit(pos) && self.at(text, pos + 1, part + 1)) || self.at(text, pos, part + 1)
            }
            Rep::ZeroOrMore | Rep::OneOrMore => {
                let mut n = 0;
                while hit(pos + n) {
                    n += 1;
                }
                let least = usize::from(rep == Rep::OneOrMore);
                (least..=n).rev().any(|k| self.at(text, pos + k, part + 1))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Filter;

    #[test]
    fn filters_search_unless_anchored() {
        assert!(Filter::new("bc").matches("abcd"));
        assert!(!Filter::new("^bc").matches("abcd"));
        assert!(Filter::new("^ab").matches("abcd"));
        assert!(Filter::new("cd$").matches("abcd"));
        assert!(!Filter::new("bc$").matches("abcd"));
        assert!(Filter::new("^a.*d$").matches("abcd"));
        assert!(Filter::new("^a.+d$").matches("axd"));
        assert!(!Filter::new("^a.+d$").matches("ad"));
        assert!(Filter::new("^ab?c$").matches("ac"));
        assert!(Filter::new("^a\\.b$").matches("a.b"));
        assert!(!Filter::new("^a\\.b$").matches("axb"));
        assert!(Filter::new("").matches("anything"));
    }
}
