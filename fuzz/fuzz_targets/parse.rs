//! Every parser, on any bytes: never panics, and every definition's lines lie inside the file.
#![no_main]

use fittok_engine::model::Lang;
use fittok_engine::parse::parse_file_with;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&pick, source)) = data.split_first() else {
        return;
    };
    let lang = Lang::ALL[pick as usize % Lang::ALL.len()];
    let regions = pick & 0x80 != 0;
    let parsed = parse_file_with("fuzz/input", lang, source, regions);
    let lines = source.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
    for d in &parsed.definitions {
        assert!(d.start_line >= 1 && d.start_line <= d.end_line, "{d:?}");
        assert!(d.end_line <= lines + 1, "{d:?} past line {lines}");
    }
});
