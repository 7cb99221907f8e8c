//! The scrubber on any text, in both dialects: never panics, findings are in order and inside
//! the text, and scrubbing keeps the line count.
#![no_main]

use fittok_engine::scrub::{Dialect, find, scrub};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for dialect in [Dialect::Code, Dialect::Config] {
        let found = find(&text, dialect);
        let mut end = 0;
        for f in &found {
            assert!(f.start >= end && f.start < f.end && f.end <= text.len());
            assert!(text.is_char_boundary(f.start) && text.is_char_boundary(f.end));
            end = f.end;
        }
        let (clean, _) = scrub(&text, dialect);
        assert_eq!(clean.lines().count(), text.lines().count());
    }
});
