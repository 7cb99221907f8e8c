//! `fittokd inspect`: the graph's vital signs per language.

use std::collections::BTreeMap;
use std::fmt::Write;

use fittok_engine::link::summarize;
use fittok_engine::model::Lang;
use fittok_engine::repo::RepoGraph;

fn skipped_by_lang(repo: &RepoGraph) -> BTreeMap<Option<Lang>, BTreeMap<&'static str, usize>> {
    let mut out: BTreeMap<Option<Lang>, BTreeMap<&'static str, usize>> = BTreeMap::new();
    for (_, lang, reason) in &repo.walk.skipped {
        *out.entry(*lang)
            .or_default()
            .entry(reason.name())
            .or_default() += 1;
    }
    out
}

fn rate(num: u64, den: u64) -> f64 {
    if den == 0 {
        0.0
    } else {
        100.0 * num as f64 / den as f64
    }
}

pub fn text(repo: &RepoGraph) -> String {
    let summary = summarize(&repo.graph);
    let skipped = skipped_by_lang(repo);
    let t = repo.timings;
    let total_bytes: u64 = summary.values().map(|s| s.bytes).sum();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} files, {:.1} MB, {} nodes, {} edges, {} import edges",
        repo.root.display(),
        repo.graph.files.len(),
        total_bytes as f64 / 1e6,
        repo.graph.nodes.len(),
        repo.graph.edges.len(),
        repo.graph.imports.len()
    );
    let _ = writeln!(
        out,
        "walk {:.0} ms, parse {:.0} ms ({:.1} MB/s), link {:.0} ms",
        t.walk.as_secs_f64() * 1e3,
        t.parse.as_secs_f64() * 1e3,
        total_bytes as f64 / 1e6 / t.parse.as_secs_f64().max(1e-9),
        t.link.as_secs_f64() * 1e3
    );
    for (lang, s) in &summary {
        let _ = writeln!(out, "\n{}", lang.name());
        let skip = skipped
            .get(&Some(*lang))
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{v} {k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "  files    {} parsed ({:.1} MB){}{}{}",
            s.files,
            s.bytes as f64 / 1e6,
            if skip.is_empty() {
                String::new()
            } else {
                format!(", skipped: {skip}")
            },
            if s.diagnostics > 0 {
                format!(", {} syntax diagnostics", s.diagnostics)
            } else {
                String::new()
            },
            if s.lossy_files > 0 {
                format!(", {} non-UTF-8", s.lossy_files)
            } else {
                String::new()
            },
        );
        let nodes = s
            .nodes_by_kind
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(out, "  nodes    {nodes}");
        let edges = s
            .edges_by_kind
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(", ");
        let _ = writeln!(out, "  edges    {edges}; imports {}", s.import_edges);
        if *lang != Lang::Markdown {
            let _ = writeln!(
                out,
                "  resolved {:.1}% of {} references; {:.1}% of {} imports to repository files",
                rate(s.resolved, s.references),
                s.references,
                rate(s.imports_resolved, s.imports),
                s.imports
            );
        }
    }
    // Skips of languages with nothing parsed, and of paths of no language (symlinks):
    // a user must see those too.
    for (lang, m) in &skipped {
        if lang.is_some_and(|l| summary.contains_key(&l)) {
            continue;
        }
        let list = m
            .iter()
            .map(|(k, v)| format!("{v} {k}"))
            .collect::<Vec<_>>()
            .join(", ");
        match lang {
            Some(l) => {
                let _ = writeln!(out, "\n{}\n  files    0 parsed, skipped: {list}", l.name());
            }
            None => {
                let _ = writeln!(out, "\nother paths\n  skipped: {list}");
            }
        }
    }
    if !repo.walk.errors.is_empty() {
        let _ = writeln!(out, "\nwalk errors: {}", repo.walk.errors.len());
        for e in repo.walk.errors.iter().take(5) {
            let _ = writeln!(out, "  {e}");
        }
    }
    out
}

pub fn json(repo: &RepoGraph) -> String {
    let summary = summarize(&repo.graph);
    let skipped = skipped_by_lang(repo);
    let mut langs = serde_json::Map::new();
    let empty = fittok_engine::link::LangSummary::default();
    let all: std::collections::BTreeSet<Lang> = summary
        .keys()
        .copied()
        .chain(skipped.keys().flatten().copied())
        .collect();
    for lang in &all {
        let s = summary.get(lang).unwrap_or(&empty);
        langs.insert(
            lang.name().to_string(),
            serde_json::json!({
                "files": s.files,
                "bytes": s.bytes,
                "skipped": skipped.get(&Some(*lang)).cloned().unwrap_or_default(),
                "nodes": s.nodes_by_kind,
                "edges": s.edges_by_kind,
                "import_edges": s.import_edges,
                "references": s.references,
                "resolved": s.resolved,
                "resolution_rate": rate(s.resolved, s.references) / 100.0,
                "imports": s.imports,
                "imports_resolved": s.imports_resolved,
                "diagnostics": s.diagnostics,
                "lossy_files": s.lossy_files,
            }),
        );
    }
    let t = repo.timings;
    let value = serde_json::json!({
        "root": repo.root.display().to_string(),
        "files": repo.graph.files.len(),
        "nodes": repo.graph.nodes.len(),
        "edges": repo.graph.edges.len(),
        "import_edges": repo.graph.imports.len(),
        "skipped": repo.walk.skipped.iter().map(|(p, _, r)| serde_json::json!({"path": p, "reason": r.name()})).collect::<Vec<_>>(),
        "walk_errors": repo.walk.errors,
        "timings_ms": {
            "walk": t.walk.as_secs_f64() * 1e3,
            "parse": t.parse.as_secs_f64() * 1e3,
            "link": t.link.as_secs_f64() * 1e3,
        },
        "languages": langs,
    });
    let mut s = serde_json::to_string_pretty(&value).unwrap_or_default();
    s.push('\n');
    s
}

/// The most frequent unresolved references, per language: where resolution has work left.
pub fn unresolved(repo: &RepoGraph, n: usize) -> String {
    let g = &repo.graph;
    let mut counts: BTreeMap<(Lang, String), usize> = BTreeMap::new();
    for &(fi, ri) in &g.unresolved {
        let f = &g.files[fi as usize];
        let Some(r) = f.references.get(ri as usize) else {
            continue;
        };
        let key = match r.receiver {
            Some(recv) => format!("{:?} {recv}.{}", r.kind, r.name),
            None => format!("{:?} {}", r.kind, r.name),
        };
        *counts.entry((f.lang, key)).or_default() += 1;
    }
    let mut by_lang: BTreeMap<Lang, Vec<(usize, String)>> = BTreeMap::new();
    for ((lang, key), c) in counts {
        by_lang.entry(lang).or_default().push((c, key));
    }
    let mut out = String::new();
    for (lang, mut v) in by_lang {
        v.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let _ = writeln!(out, "\nunresolved in {}:", lang.name());
        for (c, key) in v.into_iter().take(n) {
            let _ = writeln!(out, "  {c:6} {key}");
        }
    }
    out
}

/// The first `n` diagnostics of the repository's files, in path order: a grammar's refusal
/// loses the definitions around it, so this is where to look when a definition is missing.
pub fn diagnostics(repo: &RepoGraph, n: usize) -> String {
    let mut files: Vec<_> = repo
        .graph
        .files
        .iter()
        .filter(|f| !f.diagnostics.is_empty())
        .collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    let total: usize = files.iter().map(|f| f.diagnostics.len()).sum();
    let mut out = format!("\ndiagnostics (first {} of {total}):\n", n.min(total));
    for (f, d) in files
        .iter()
        .flat_map(|f| f.diagnostics.iter().map(move |d| (f, d)))
        .take(n)
    {
        let _ = writeln!(out, "  {}:{}  {}", f.path, d.line, d.message);
    }
    out
}

/// Resolved references sampled evenly per language: the line that refers, and what it was
/// linked to.
pub fn sample(repo: &RepoGraph, root: &std::path::Path, n: usize) -> String {
    let g = &repo.graph;
    let mut by_lang: BTreeMap<Lang, Vec<(u32, u32, u32)>> = BTreeMap::new();
    for r in &g.resolutions {
        by_lang
            .entry(g.files[r.file as usize].lang)
            .or_default()
            .push((r.file, r.reference(), r.target));
    }
    let mut out = String::new();
    for (lang, list) in by_lang {
        let _ = writeln!(
            out,
            "\nresolved in {} (sample of {} of {}):",
            lang.name(),
            n.min(list.len()),
            list.len()
        );
        let step = (list.len() / n.max(1)).max(1);
        for &(fi, ri, target) in list.iter().step_by(step).take(n) {
            let f = &g.files[fi as usize];
            let Some(r) = f.references.get(ri as usize) else {
                continue;
            };
            let line = std::fs::read(root.join(&f.path))
                .ok()
                .and_then(|b| {
                    String::from_utf8_lossy(&b)
                        .lines()
                        .nth(r.line as usize - 1)
                        .map(|l| l.trim().chars().take(90).collect::<String>())
                })
                .unwrap_or_default();
            let t = g.def(target);
            let _ = writeln!(
                out,
                "  {}:{}  {}\n      → {}:{} {} {}",
                f.path,
                r.line,
                line,
                g.file_of(target).path,
                t.start_line,
                t.kind.name(),
                t.qualified_name
            );
        }
    }
    out
}
