//! Structured round trip: the input seeds the testkit generators, which draw a schema-valid
//! `ServerMessage` and `ClientMessage`. Each is encoded, checked as a received frame, copied
//! out, and encoded again; the second encoding must equal the first bit for bit. These are the
//! only assertions of the fuzz targets.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nervix_protocol::encode::Encoder;
use nervix_protocol::frame::{ClientMessageRoot, Frame, Root, ServerMessageRoot};
use nervix_protocol::testkit::{Gen, Generate};

fn round_trip<R: Root>(enc: &mut Encoder, seed: &[u8])
where
    R::Owned: Generate,
{
    let value: R::Owned = Gen::new(seed).value();
    let bytes = match enc.encode::<R>(&value) {
        Ok(bytes) => bytes,
        Err(e) => panic!("a generated {} does not encode: {e}\n{value:?}", R::NAME),
    };
    let frame = match Frame::<R>::check(bytes.clone()) {
        Ok(frame) => frame,
        Err(v) => panic!(
            "checked reading refuses an encoded {}: {v}\n{value:?}",
            R::NAME
        ),
    };
    let back = frame.unpack();
    let again = match enc.encode::<R>(&back) {
        Ok(again) => again,
        Err(e) => panic!("a read-back {} does not encode: {e}\n{back:?}", R::NAME),
    };
    assert_eq!(bytes, again, "{} changed in a round trip", R::NAME);
    // Valid frames reach every accessor that random bytes rarely get to.
    std::hint::black_box(frame.report());
}

fuzz_target!(|data: &[u8]| {
    // The first byte splits the rest between the two generators.
    let (server, client) = match data.split_first() {
        Some((&cut, rest)) => rest.split_at(usize::from(cut) * rest.len() / 255),
        None => (data, data),
    };
    let mut enc = Encoder::new();
    round_trip::<ServerMessageRoot>(&mut enc, server);
    round_trip::<ClientMessageRoot>(&mut enc, client);
});
