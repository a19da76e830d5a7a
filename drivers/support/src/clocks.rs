//! What a driver does alike with the events of a followed clock before the application reads
//! them: which followed clock an event belongs to, and the one unread event of each kind a
//! clock keeps while its reader is behind, newest last (K-3).

use nervix_protocol::client::ClockEvent;
use std::collections::VecDeque;

/// The domain a clock event is about, which names the followed clock it goes to.
pub fn clock_domain(e: &ClockEvent) -> Option<&str> {
    Some(e.domain())
}

/// Keeps `e` behind what `waiting` holds, replacing an unread event of the same kind, so at
/// most one of each kind waits and the newest is last (K-3). One queue serves one clock.
pub fn keep_newest_of_kind<T>(waiting: &mut VecDeque<T>, e: T) {
    let kind = std::mem::discriminant(&e);
    waiting.retain(|w| std::mem::discriminant(w) != kind);
    waiting.push_back(e);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interrupted(d: &str) -> ClockEvent {
        ClockEvent::Interrupted { domain: d.into() }
    }

    fn refused(d: &str, m: &str) -> ClockEvent {
        ClockEvent::Refused {
            domain: d.into(),
            message: m.into(),
        }
    }

    #[test]
    fn k_3_one_unread_event_of_each_kind_is_kept_the_newest_last() {
        let mut waiting = VecDeque::new();
        keep_newest_of_kind(&mut waiting, refused("d", "first"));
        keep_newest_of_kind(&mut waiting, interrupted("d"));
        keep_newest_of_kind(&mut waiting, refused("d", "second"));
        assert_eq!(
            Vec::from(waiting.clone()),
            [interrupted("d"), refused("d", "second")],
            "the older refusal replaced, the newer one behind the interruption"
        );
        keep_newest_of_kind(&mut waiting, interrupted("d"));
        assert_eq!(
            Vec::from(waiting),
            [refused("d", "second"), interrupted("d")]
        );
    }

    #[test]
    fn k_3_a_clock_event_goes_to_the_clock_of_its_domain() {
        assert_eq!(clock_domain(&interrupted("eu")), Some("eu"));
        assert_eq!(clock_domain(&refused("us", "no")), Some("us"));
        let already = ClockEvent::AlreadyAttached {
            domain: "ap".into(),
        };
        assert_eq!(clock_domain(&already), Some("ap"));
        let detach = ClockEvent::DetachRefused {
            domain: "sa".into(),
            message: "busy".into(),
        };
        assert_eq!(clock_domain(&detach), Some("sa"));
    }
}
