//! A fixed number of request/reply round trips through one `Exchange`, for counting
//! instructions (`valgrind --tool=callgrind`): the count is the same run after run.

use nervix_protocol::encode::Encoder;
use nervix_protocol::exchange::{Exchange, ExchangeConfig, ExchangeEvent};
use nervix_protocol::frame::ServerMessageRoot;
use nervix_protocol::schema::*;
use nervix_protocol::time::Timestamp;
use std::hint::black_box;

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let mut enc = Encoder::new();
    let frames: Vec<_> = (1..=n)
        .map(|id| {
            let msg = ServerMessageT {
                body: ServerBodyT::Reply(Box::new(ReplyT {
                    request_id: id,
                    body: ReplyBodyT::DomainList(Box::new(DomainListT { domains: vec![] })),
                })),
            };
            enc.encode::<ServerMessageRoot>(&msg).expect("reply frame")
        })
        .collect();
    let request = ClientRequestT::ListDomainsRequest(Box::default());
    let mut x = Exchange::new(ExchangeConfig::default());
    let now = Timestamp::ZERO;
    for frame in frames {
        let _h = x.request(now, &request, None).expect("request");
        black_box(x.poll_transmit().expect("a frame to send"));
        x.handle_frame(now, frame);
        match x.poll_event() {
            Some(ExchangeEvent::Replied { frame, .. }) => {
                black_box(frame);
            }
            other => panic!("{other:?}"),
        }
    }
}
