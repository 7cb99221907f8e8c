//! Single-file copies of a C or C++ project's own sources: amalgamations such as
//! `single_include/nlohmann/json.hpp`, `extras/catch_amalgamated.cpp` or `doctest/doctest.h`,
//! written by a script that concatenates the real headers and sources so users can vendor one
//! file. Fixes go to the real sources (the copy is regenerated), yet the copy holds every
//! definition a second time: answers would spend half their budget on duplicates, and a
//! question's words would find the copy's versions as often as the real ones.
//!
//! A large C or C++ file is a copy when most of its distinctive lines (long enough to be
//! code, not braces) are found in other files of the repository, drawn from at least two of
//! them. A real file never looks like that: its lines are its own, or come from one file it
//! was forked from. When the real sources are absent (a library shipped only as one header),
//! nothing matches and the file stays.

use std::collections::{HashMap, HashSet};

use crate::model::Lang;

/// Files smaller than this are never copies: amalgamations gather a whole library.
pub const MIN_COPY_BYTES: usize = 32 * 1024;
/// A line shorter than this (trimmed) says too little to be matched across files.
const MIN_LINE_CHARS: usize = 20;
/// How many of a candidate's distinctive lines are looked up, evenly spaced.
const SAMPLE_LINES: usize = 1024;
/// The share of sampled lines found elsewhere that makes a copy.
const COPY_SHARE: f32 = 0.5;
/// How many other files must supply them.
const MIN_SOURCES: usize = 2;
/// Above this much C and C++ in all, no file is checked: the check reads every line of every
/// such file on each build and update, and trees that large (an operating system's) are not
/// the kind that ships an amalgamation beside its sources.
const MAX_SCANNED_BYTES: usize = 64 << 20;

/// One file as the check sees it.
pub struct File<'a> {
    pub lang: Lang,
    pub bytes: &'a [u8],
}

fn line_hash(line: &[u8]) -> u64 {
    fittok_util::hash::fnv(line, 0xcbf2_9ce4_8422_2325)
}

/// The trimmed lines of `bytes` long enough to be matched.
fn distinctive(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| l.len() >= MIN_LINE_CHARS)
}

/// The indexes in `files` of the copies (see the module's doc). Reads nothing but the bytes
/// given; costs nothing when no C or C++ file reaches [`MIN_COPY_BYTES`].
pub fn copies(files: &[File<'_>]) -> Vec<usize> {
    let is_c = |f: &File<'_>| matches!(f.lang, Lang::C | Lang::Cpp);
    let candidates: Vec<usize> = (0..files.len())
        .filter(|&i| is_c(&files[i]) && files[i].bytes.len() >= MIN_COPY_BYTES)
        .collect();
    let scanned: usize = files
        .iter()
        .filter(|&f| is_c(f))
        .map(|f| f.bytes.len())
        .sum();
    if candidates.is_empty() || scanned > MAX_SCANNED_BYTES {
        return Vec::new();
    }
    // Each candidate's sample, and for each sampled line the candidates that sampled it.
    let mut wanted: HashMap<u64, Vec<usize>> = HashMap::new();
    let mut sampled: Vec<HashSet<u64>> = Vec::with_capacity(candidates.len());
    for (k, &i) in candidates.iter().enumerate() {
        let lines: Vec<u64> = distinctive(files[i].bytes).map(line_hash).collect();
        let step = lines.len().div_ceil(SAMPLE_LINES).max(1);
        let sample: HashSet<u64> = lines.into_iter().step_by(step).collect();
        for &h in &sample {
            wanted.entry(h).or_default().push(k);
        }
        sampled.push(sample);
    }
    // For each candidate, the sampled lines each other file holds.
    let mut found_in: Vec<HashMap<usize, HashSet<u64>>> = vec![HashMap::new(); candidates.len()];
    for (j, file) in files.iter().enumerate().filter(|&(_, f)| is_c(f)) {
        for line in distinctive(file.bytes) {
            let h = line_hash(line);
            let Some(ks) = wanted.get(&h) else {
                continue;
            };
            for &k in ks {
                if candidates[k] != j {
                    found_in[k].entry(j).or_default().insert(h);
                }
            }
        }
    }
    // Largest first: an amalgamation is larger than each of its parts, and once it is known
    // as a copy its lines no longer vouch for a part (whose lines are, of course, in it).
    let mut order: Vec<usize> = (0..candidates.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(files[candidates[k]].bytes.len()));
    let mut copies: Vec<usize> = Vec::new();
    for k in order {
        let mut found: HashSet<u64> = HashSet::new();
        let mut sources = 0;
        for (j, lines) in &found_in[k] {
            if !copies.contains(j) {
                found.extend(lines);
                sources += 1;
            }
        }
        let share = found.len() as f32 / sampled[k].len().max(1) as f32;
        if !sampled[k].is_empty() && share >= COPY_SHARE && sources >= MIN_SOURCES {
            copies.push(candidates[k]);
        }
    }
    copies.sort_unstable();
    copies
}

#[cfg(test)]
mod tests {
    use super::{File, MIN_COPY_BYTES, copies};
    use crate::model::Lang;

    /// A header of `n` functions, each with lines no other part shares.
    fn part(tag: &str, n: usize) -> String {
        (0..n)
            .map(|i| {
                format!(
                    "inline int {tag}_function_{i}(int value_{i}) {{\n    return compute_{tag}_{i}(value_{i}) + offset_{tag};\n}}\n"
                )
            })
            .collect()
    }

    fn file<'a>(path: &str, text: &'a str) -> File<'a> {
        file_in(Lang::Cpp, path, text)
    }

    fn file_in<'a>(lang: Lang, _path: &str, text: &'a str) -> File<'a> {
        File {
            lang,
            bytes: text.as_bytes(),
        }
    }

    #[test]
    fn an_amalgamation_of_the_real_sources_is_a_copy_and_they_are_not() {
        let (a, b, c) = (part("alpha", 150), part("beta", 150), part("gamma", 150));
        let whole = format!("// generated\n#pragma once\n{a}{b}{c}");
        assert!(whole.len() >= MIN_COPY_BYTES && a.len() >= MIN_COPY_BYTES / 3);
        let files = [
            file("include/lib/alpha.hpp", &a),
            file("include/lib/beta.hpp", &b),
            file("include/lib/gamma.hpp", &c),
            file("single_include/lib.hpp", &whole),
        ];
        assert_eq!(copies(&files), vec![3]);
    }

    #[test]
    fn a_large_part_stays_though_the_copy_and_another_file_repeat_it() {
        // doctest: `parts/public/macros.h` is large, in the amalgamation, and partly repeated
        // by another part.
        let macros = part("macro", 400);
        let (a, b) = (part("alpha", 150), part("beta", 150));
        let repeat = format!("{}{a}", &macros[..macros.len() / 2]);
        let whole = format!("{macros}{a}{b}");
        let files = [
            file("parts/public/macros.h", &macros),
            file("parts/private/alpha.h", &repeat),
            file("parts/private/beta.h", &b),
            file("doctest.h", &whole),
        ];
        assert!(macros.len() >= MIN_COPY_BYTES && repeat.len() >= MIN_COPY_BYTES);
        assert_eq!(copies(&files), vec![3]);
    }

    #[test]
    fn a_single_header_library_without_its_parts_stays() {
        let whole = format!("{}{}", part("alpha", 200), part("beta", 200));
        let files = [
            file("lib.hpp", &whole),
            file("main.cpp", "int main() { return 0; }\n"),
        ];
        assert!(copies(&files).is_empty());
    }

    #[test]
    fn a_file_forked_from_one_other_stays() {
        let original = part("alpha", 400);
        let fork = format!("{original}{}", part("extra", 10));
        let files = [file("src/old.cpp", &original), file("src/new.cpp", &fork)];
        assert!(copies(&files).is_empty());
    }

    #[test]
    fn other_languages_are_never_copies() {
        let (a, b) = (part("alpha", 300), part("beta", 300));
        let whole = format!("{a}{b}");
        let files = [
            file_in(Lang::Python, "a.py", &a),
            file_in(Lang::Python, "b.py", &b),
            file_in(Lang::Python, "all.py", &whole),
        ];
        assert!(copies(&files).is_empty());
    }
}
