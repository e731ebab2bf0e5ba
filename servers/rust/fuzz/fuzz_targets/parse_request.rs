//! Fuzz target for the request parser, `renard::request`: it must never panic, a
//! complete head must lie within the input, and the same octets dripped in two pieces
//! (split where the input's first octet says) must get the same outcome as at once.
//! Run: `cargo fuzz run parse_request` (or `fuzz/run SECONDS`).
#![no_main]

use renard::request::{Parse, Progress, Request, parse, parse_more};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let whole = parse(data);
    if let Parse::Complete(r) = whole {
        assert!(r.head_len <= data.len());
    }
    let Some((&split, data)) = data.split_first() else { return };
    let whole = parse(data);
    let cut = usize::from(split) * data.len() / 255;
    let mut progress = Progress::default();
    let first = parse_more(&data[..cut], &mut progress);
    let resumed = match first {
        Parse::Partial { empty_lines } => match parse_more(&data[empty_lines..], &mut progress) {
            Parse::Complete(r) => Parse::Complete(Request { head_len: empty_lines + r.head_len, ..r }),
            Parse::Partial { empty_lines: more } => Parse::Partial { empty_lines: empty_lines + more },
            error => error,
        },
        decided => decided,
    };
    assert_eq!(whole, resumed, "cut at {cut}");
});
