//! `cargo bench -p fittok-engine --bench update -- REPO FILE [EDITS]`
//!
//! What a save costs in process, beside what it would cost without incremental updates: copies
//! REPO's working tree (without `.git`) to a temporary directory, opens it, then EDITS times
//! (default 5) appends a comment line to FILE — or with `EDIT_KIND=definition` a new
//! top-level definition, which changes the file's interface — and runs `Engine::update`,
//! printing each stage; finally it opens the edited copy from scratch (the baseline: a full
//! rebuild of the same tree, no cache). With `MODEL=DIR` (an all-MiniLM-L6-v2 directory) the
//! engine has a vector store in a temporary directory and the model attached, with no vector
//! embedded yet — a daemon's state while its background embedder has barely started — and the
//! `semantic` column is what carrying the vectors over costs each update. `STORE=1` gives the
//! engine a parse cache (in that temporary directory) without the model.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fittok_engine::Engine;

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name == ".git" {
            continue;
        }
        let ty = entry.file_type()?;
        if ty.is_dir() {
            copy_tree(&entry.path(), &to.join(&name))?;
        } else if ty.is_file() {
            std::fs::copy(entry.path(), to.join(&name))?;
        }
    }
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let (Some(repo), Some(file)) = (args.first(), args.get(1)) else {
        eprintln!("usage: cargo bench -p fittok-engine --bench update -- REPO FILE [EDITS]");
        std::process::exit(2);
    };
    let edits: usize = args.get(2).and_then(|e| e.parse().ok()).unwrap_or(5);
    let root: PathBuf =
        std::env::temp_dir().join(format!("fittok-update-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    if let Err(e) = copy_tree(Path::new(repo), &root) {
        eprintln!("cannot copy {repo}: {e}");
        std::process::exit(1);
    }
    let config = Arc::new(fittok_engine::Config::default());
    let model = std::env::var_os("MODEL").map(PathBuf::from);
    let store_dir = root.with_extension("store");
    // A daemon's engine writes each update's parses to its cache: STORE=1 (or MODEL) measures
    // that too.
    let with_store = model.is_some() || std::env::var_os("STORE").is_some();
    let store = with_store.then(|| {
        let _ = std::fs::create_dir_all(&store_dir);
        match fittok_engine::store::Store::open(&store_dir.join("cache.redb")) {
            Ok(s) => Arc::new(s),
            Err(e) => {
                eprintln!("cannot open a vector store: {e}");
                std::process::exit(1);
            }
        }
    });
    let t = Instant::now();
    let mut engine = match Engine::open_in(&root, config.clone(), store, None) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    if let Some(dir) = &model {
        match fittok_engine::embed::Embedder::load(dir, &config.embed) {
            Ok(m) => engine.attach_semantic(Arc::new(m)),
            Err(e) => {
                eprintln!("cannot load the model at {}: {e}", dir.display());
                std::process::exit(1);
            }
        }
        println!(
            "model attached, {} nodes to embed",
            engine.semantic.missing()
        );
    }
    let nodes = engine.repo.graph.nodes.len();
    println!(
        "{repo}: {} files, {nodes} nodes; open {:.0} ms (walk {:.0}, parse {:.0}, link {:.0}, lexical {:.0})",
        engine.repo.graph.files.len(),
        ms(t.elapsed()),
        ms(engine.timings.walk),
        ms(engine.timings.parse),
        ms(engine.timings.link),
        ms(engine.timings.lexical),
    );
    println!(
        "\n| edit | update total | walk | parse | link | lexical | semantic |\n|---|---|---|---|---|---|---|"
    );
    let definitions = std::env::var("EDIT_KIND").is_ok_and(|k| k == "definition");
    let mut totals = Vec::new();
    for i in 0..edits {
        let path = root.join(file);
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        text.push_str(&match ext {
            _ if !definitions => format!("\n// edit {i}\n"),
            "py" => format!("\n\ndef fittok_edit_{i}():\n    return {i}\n"),
            "go" => format!("\nfunc fittokEdit{i}() int {{ return {i} }}\n"),
            "java" => format!("\nclass FittokEdit{i} {{ int v = {i}; }}\n"),
            "scala" => format!("\nobject FittokEdit{i} {{ val v = {i} }}\n"),
            _ => format!("\npub fn fittok_edit_{i}() -> u32 {{ {i} }}\n"),
        });
        if let Err(e) = std::fs::write(&path, text) {
            eprintln!("cannot edit {file}: {e}");
            std::process::exit(1);
        }
        let t = Instant::now();
        engine = match engine.update([file.clone()].into_iter().collect(), None) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("{e}");
                std::process::exit(1);
            }
        };
        let total = t.elapsed();
        totals.push(total);
        let tm = &engine.timings;
        println!(
            "| {} | {:.0} ms | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
            i + 1,
            ms(total),
            ms(tm.walk),
            ms(tm.parse),
            ms(tm.link),
            ms(tm.lexical),
            ms(tm.semantic_load)
        );
    }
    totals.sort();
    let t = Instant::now();
    let fresh = Engine::open_in(&root, config, None, None);
    let rebuild = t.elapsed();
    println!(
        "\nupdate p50 {:.0} ms over {edits} edits; baseline, the same tree rebuilt from scratch: {:.0} ms{}",
        ms(totals[totals.len() / 2]),
        ms(rebuild),
        if fresh.is_ok() { "" } else { " (failed)" }
    );
    let _ = std::fs::remove_dir_all(&root);
    let _ = std::fs::remove_dir_all(&store_dir);
}
