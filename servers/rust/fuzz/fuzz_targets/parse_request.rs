//! Fuzz target for the request parser entry point, `request::parse`: it must never
//! panic, and a complete head must lie within the input. Run: `cargo fuzz run parse_request`.
#![no_main]

// The server is a binary crate: its parser's two files are compiled in here as they are.
#[path = "../../src/request.rs"]
#[allow(dead_code)]
mod request;
#[path = "../../src/seed.rs"]
#[allow(dead_code)]
mod seed;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let request::Parse::Complete(r) = request::parse(data) {
        assert!(r.head_len <= data.len());
    }
});
