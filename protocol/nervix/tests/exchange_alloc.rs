//! A request/reply round trip through the exchange allocates no more than its frames: the
//! request frame it writes and the small reply frame it copies out of the receive buffer (F-9).

use nervix_protocol::encode::Encoder;
use nervix_protocol::exchange::{Exchange, ExchangeConfig, ExchangeEvent};
use nervix_protocol::frame::ServerMessageRoot;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;
static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn c_2_round_trips_allocate_only_their_frames() {
    let n = 2000u64;
    let mut enc = Encoder::new();
    let replies: Vec<bytes::Bytes> = (1..=n)
        .map(|id| {
            enc.encode::<ServerMessageRoot>(&ServerMessageT {
                body: ServerBodyT::Reply(Box::new(ReplyT {
                    request_id: id,
                    body: ReplyBodyT::DomainList(Box::new(DomainListT { domains: vec![] })),
                })),
            })
            .unwrap()
        })
        .collect();
    let request = ClientRequestT::ListDomainsRequest(Box::default());
    let mut x = Exchange::new(ExchangeConfig::default());
    let now = Timestamp::ZERO;
    let mut frames = replies.into_iter();
    let mut trip = |x: &mut Exchange| {
        x.request(now, &request, None).unwrap();
        drop(x.poll_transmit().unwrap());
        x.handle_frame(now, frames.next().unwrap());
        assert!(matches!(
            x.poll_event(),
            Some(ExchangeEvent::Replied { .. })
        ));
    };
    for _ in 0..100 {
        trip(&mut x);
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    let measured = 1000;
    for _ in 0..measured {
        trip(&mut x);
    }
    let per_trip = (ALLOCS.load(Ordering::Relaxed) - before) as f64 / measured as f64;
    // The request frame is cut from the encoder's arena (one allocation per 64 KiB of frames);
    // the reply frame is copied out of its receive buffer once.
    assert!(per_trip <= 1.05, "{per_trip} allocations per round trip");
}
