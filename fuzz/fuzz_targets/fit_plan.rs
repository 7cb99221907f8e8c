//! The FIT planner on any text: never panics; every file stays under hard unless one line
//! alone is over it; every non-blank line of the input is somewhere in the tree.
#![no_main]

use fittok_engine::fit::{Estimator, FitOptions, plan, unsplittable_line};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // Small enough that inputs of a few KB are split two or three levels deep; not so small
    // that two link lines with the longest names (≈ 50 tokens each) cannot fit.
    let opts = FitOptions {
        soft: 300,
        hard: 500,
        estimator: Estimator::Chars4,
        inline_threshold: 60,
        ..FitOptions::default()
    };
    let Ok(files) = plan(&text, "doc.md", &opts) else {
        return;
    };
    let all: String = files.iter().map(|f| f.text.as_str()).collect();
    for f in &files {
        assert!(
            f.tokens <= opts.hard || unsplittable_line(&f.text, &opts).is_some(),
            "{} has {} tokens",
            f.rel,
            f.tokens
        );
    }
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        assert!(all.contains(line.trim_end()), "lost: {line:?}");
    }
});
