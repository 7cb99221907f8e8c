//! Property: an engine updated through `Engine::update` after any sequence of edits equals a
//! fresh build of the same files — nodes, edges, imports, resolution — after every step.
//! Edits are random (seeded): add, remove and rename functions, change call sites and
//! imports, delete and re-add files, add new files; in Python, TypeScript, Go and Rust.

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use crate::engine::Engine;
use crate::link::Graph;

use crate::testing::Rng;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum L {
    Py,
    Ts,
    Go,
    Rs,
    Cs,
    Rb,
    Kt,
    Scala,
    Php,
    Swift,
    Cpp,
}

impl L {
    const ALL: [L; 11] = [
        L::Py,
        L::Ts,
        L::Go,
        L::Rs,
        L::Cs,
        L::Rb,
        L::Kt,
        L::Scala,
        L::Php,
        L::Swift,
        L::Cpp,
    ];

    /// The directory a language's files live in (Swift's is a module's target directory).
    fn dir(self) -> &'static str {
        match self {
            L::Py => "py/",
            L::Ts => "ts/",
            L::Go => "go/",
            L::Rs => "rs/",
            L::Cs => "cs/",
            L::Rb => "rb/",
            L::Kt => "kt/",
            L::Scala => "scala/",
            L::Php => "php/",
            L::Swift => "Sources/Prop/",
            L::Cpp => "cpp/",
        }
    }

    fn ext(self) -> &'static str {
        match self {
            L::Py => "py",
            L::Ts => "ts",
            L::Go => "go",
            L::Rs => "rs",
            L::Cs => "cs",
            L::Rb => "rb",
            L::Kt => "kt",
            L::Scala => "scala",
            L::Php => "php",
            L::Swift => "swift",
            L::Cpp => "cpp",
        }
    }
}

struct Func {
    name: String,
    calls: Vec<String>,
}

struct FileModel {
    lang: L,
    stem: String,
    funcs: Vec<Func>,
    present: bool,
}

impl FileModel {
    fn path(&self) -> String {
        format!("{}{}.{}", self.lang.dir(), self.stem, self.lang.ext())
    }
}

struct Model {
    files: Vec<FileModel>,
    next_name: usize,
}

impl Model {
    fn fresh_name(&mut self, lang: L) -> String {
        self.next_name += 1;
        match lang {
            L::Go => format!("Fn{}", self.next_name),
            _ => format!("fn{}", self.next_name),
        }
    }

    /// Where a name is defined (a present file of the same language), if anywhere.
    fn home(&self, lang: L, name: &str) -> Option<&FileModel> {
        self.files
            .iter()
            .find(|f| f.lang == lang && f.present && f.funcs.iter().any(|g| g.name == name))
    }

    fn render(&self, f: &FileModel) -> String {
        let called: BTreeSet<&str> = f
            .funcs
            .iter()
            .flat_map(|g| g.calls.iter().map(|c| c.as_str()))
            .collect();
        let mut s = String::new();
        match f.lang {
            L::Py => {
                for c in &called {
                    if let Some(h) = self.home(L::Py, c).filter(|h| h.stem != f.stem) {
                        s.push_str(&format!("from .{} import {c}\n", h.stem));
                    }
                }
                for g in &f.funcs {
                    s.push_str(&format!("\n\ndef {}():\n", g.name));
                    for c in &g.calls {
                        s.push_str(&format!("    {c}()\n"));
                    }
                    s.push_str("    return 1\n");
                }
            }
            L::Ts => {
                for c in &called {
                    if let Some(h) = self.home(L::Ts, c).filter(|h| h.stem != f.stem) {
                        s.push_str(&format!("import {{ {c} }} from './{}';\n", h.stem));
                    }
                }
                for g in &f.funcs {
                    s.push_str(&format!("\nexport function {}(): number {{\n", g.name));
                    for c in &g.calls {
                        s.push_str(&format!("  {c}();\n"));
                    }
                    s.push_str("  return 1;\n}\n");
                }
            }
            L::Go => {
                s.push_str("package p\n");
                for g in &f.funcs {
                    s.push_str(&format!("\nfunc {}() int {{\n", g.name));
                    for c in &g.calls {
                        s.push_str(&format!("\t{c}()\n"));
                    }
                    s.push_str("\treturn 1\n}\n");
                }
            }
            L::Rs => {
                if f.stem == "lib" {
                    for m in self
                        .files
                        .iter()
                        .filter(|m| m.lang == L::Rs && m.present && m.stem != "lib")
                    {
                        s.push_str(&format!("mod {};\n", m.stem));
                    }
                }
                for c in &called {
                    if let Some(h) = self.home(L::Rs, c).filter(|h| h.stem != f.stem) {
                        let module = if h.stem == "lib" {
                            String::new()
                        } else {
                            format!("{}::", h.stem)
                        };
                        s.push_str(&format!("use crate::{module}{c};\n"));
                    }
                }
                for g in &f.funcs {
                    s.push_str(&format!("\npub fn {}() -> i32 {{\n", g.name));
                    for c in &g.calls {
                        s.push_str(&format!("    {c}();\n"));
                    }
                    s.push_str("    1\n}\n");
                }
            }
            L::Cs => {
                // One namespace; a static class per file; a call into another file goes
                // through that file's class, as C# requires.
                s.push_str(&format!(
                    "namespace Prop;\n\npublic static class C_{}\n{{\n",
                    f.stem
                ));
                for g in &f.funcs {
                    s.push_str(&format!("    public static int {}()\n    {{\n", g.name));
                    for c in &g.calls {
                        match self.home(L::Cs, c).filter(|h| h.stem != f.stem) {
                            Some(h) => s.push_str(&format!("        C_{}.{c}();\n", h.stem)),
                            None => s.push_str(&format!("        {c}();\n")),
                        }
                    }
                    s.push_str("        return 1;\n    }\n");
                }
                s.push_str("}\n");
            }
            L::Rb => {
                // A module per file; calls into another file go through its module, which
                // `require_relative` loads.
                for c in &called {
                    if let Some(h) = self.home(L::Rb, c).filter(|h| h.stem != f.stem) {
                        s.push_str(&format!("require_relative \"{}\"\n", h.stem));
                    }
                }
                s.push_str(&format!("\nmodule M_{}\n", f.stem));
                for g in &f.funcs {
                    s.push_str(&format!("  def self.{}\n", g.name));
                    for c in &g.calls {
                        match self.home(L::Rb, c).filter(|h| h.stem != f.stem) {
                            Some(h) => s.push_str(&format!("    M_{}.{c}\n", h.stem)),
                            None => s.push_str(&format!("    {c}()\n")),
                        }
                    }
                    s.push_str("    1\n  end\n");
                }
                s.push_str("end\n");
            }
            L::Cpp => {
                // A struct per file, its static members defined out of line; a call into
                // another file names that file's struct and includes the file.
                for c in &called {
                    if let Some(h) = self.home(L::Cpp, c).filter(|h| h.stem != f.stem) {
                        s.push_str(&format!("#include \"{}.cpp\"\n", h.stem));
                    }
                }
                s.push_str(&format!("\nnamespace prop {{\nstruct C_{} {{\n", f.stem));
                for g in &f.funcs {
                    s.push_str(&format!("  static int {}();\n", g.name));
                }
                s.push_str("};\n");
                for g in &f.funcs {
                    s.push_str(&format!("\nint C_{}::{}() {{\n", f.stem, g.name));
                    for c in &g.calls {
                        match self.home(L::Cpp, c).filter(|h| h.stem != f.stem) {
                            Some(h) => s.push_str(&format!("  C_{}::{c}();\n", h.stem)),
                            None => s.push_str(&format!("  {c}();\n")),
                        }
                    }
                    s.push_str("  return 1;\n}\n");
                }
                s.push_str("}\n");
            }
            L::Swift => {
                // One module (a target directory): functions see each other without imports.
                for g in &f.funcs {
                    s.push_str(&format!("\nfunc {}() -> Int {{\n", g.name));
                    for c in &g.calls {
                        s.push_str(&format!("    _ = {c}()\n"));
                    }
                    s.push_str("    return 1\n}\n");
                }
            }
            L::Php => {
                // One namespace: functions see each other across files.
                s.push_str("<?php\nnamespace Prop;\n");
                for g in &f.funcs {
                    s.push_str(&format!("\nfunction {}(): int\n{{\n", g.name));
                    for c in &g.calls {
                        s.push_str(&format!("    {c}();\n"));
                    }
                    s.push_str("    return 1;\n}\n");
                }
            }
            L::Scala => {
                // One package: top-level functions (Scala 3) see each other across files.
                s.push_str("package prop\n");
                for g in &f.funcs {
                    s.push_str(&format!("\ndef {}(): Int = {{\n", g.name));
                    for c in &g.calls {
                        s.push_str(&format!("  {c}()\n"));
                    }
                    s.push_str("  1\n}\n");
                }
            }
            L::Kt => {
                // One package: top-level functions see each other across files.
                s.push_str("package prop\n");
                for g in &f.funcs {
                    s.push_str(&format!("\nfun {}(): Int {{\n", g.name));
                    for c in &g.calls {
                        s.push_str(&format!("    {c}()\n"));
                    }
                    s.push_str("    return 1\n}\n");
                }
            }
        }
        s
    }

    fn all_names(&self, lang: L) -> Vec<String> {
        self.files
            .iter()
            .filter(|f| f.lang == lang && f.present)
            .flat_map(|f| f.funcs.iter().map(|g| g.name.clone()))
            .collect()
    }
}

/// Everything linking decides, keyed by names and paths (not by ids, which shift).
fn dump(g: &Graph) -> Vec<String> {
    let key = |n: u32| {
        let d = g.def(n);
        format!(
            "{}#{}@{}",
            g.file_of(n).path,
            d.qualified_name,
            d.start_line
        )
    };
    let mut out = Vec::new();
    for f in &g.files {
        out.push(format!(
            "file {} {:?} {}",
            f.path,
            f.lang,
            f.definitions.len()
        ));
    }
    for n in 0..g.nodes.len() as u32 {
        let d = g.def(n);
        out.push(format!(
            "node {} {:?} {}-{}",
            key(n),
            d.kind,
            d.start_line,
            d.end_line
        ));
    }
    for e in &g.edges {
        out.push(format!(
            "edge {} -{:?}-> {}",
            key(e.from),
            e.kind,
            key(e.to)
        ));
    }
    for (a, b) in &g.imports {
        out.push(format!(
            "import {} -> {}",
            g.files[*a as usize].path, g.files[*b as usize].path
        ));
    }
    for (f, s) in g.files.iter().zip(&g.stats) {
        out.push(format!("stats {} {:?}", f.path, s));
    }
    for r in &g.resolutions {
        out.push(format!(
            "resolved {}:{} -> {} {:?} of {}",
            g.files[r.file as usize].path,
            r.reference(),
            key(r.target),
            r.how(),
            r.candidates()
        ));
    }
    out.sort();
    out
}

fn write(root: &Path, model: &Model, f: &FileModel) {
    let p = root.join(f.path());
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, model.render(f)).unwrap();
}

fn run(seed: u64, steps: usize) {
    let root: PathBuf =
        std::env::temp_dir().join(format!("fittok-prop-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let mut rng = Rng::new(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut model = Model {
        files: Vec::new(),
        next_name: 0,
    };
    for lang in L::ALL {
        // `a` starts with a call into `lib`: every language resolves across files from the
        // first build on.
        let mut lib_first = None;
        for stem in ["lib", "a", "b"] {
            let funcs: Vec<Func> = (0..2)
                .map(|i| Func {
                    name: model.fresh_name(lang),
                    calls: match (stem, i, &lib_first) {
                        ("a", 0, Some(target)) => vec![String::clone(target)],
                        _ => Vec::new(),
                    },
                })
                .collect();
            if stem == "lib" {
                lib_first = funcs.first().map(|f| f.name.clone());
            }
            model.files.push(FileModel {
                lang,
                stem: stem.into(),
                funcs,
                present: true,
            });
        }
    }
    for i in 0..model.files.len() {
        write(&root, &model, &model.files[i]);
    }
    let config = std::sync::Arc::new(crate::Config::default());
    let mut engine = Engine::open_in(&root, config.clone(), None, None).unwrap();
    // Every language resolves across files from the first build on, so the updates below
    // change real edges.
    let g = &engine.repo.graph;
    for dir in L::ALL.map(L::dir) {
        assert!(
            g.edges
                .iter()
                .any(|e| e.kind == crate::link::EdgeKind::Calls
                    && g.file_of(e.from).path.starts_with(dir)
                    && g.file_of(e.to).path.starts_with(dir)),
            "seed {seed}: no call resolved in {dir}"
        );
    }
    for step in 0..steps {
        let fi = rng.below(model.files.len());
        let lang = model.files[fi].lang;
        let mut touched: HashSet<usize> = HashSet::from([fi]);
        let op = rng.below(8);
        let names = model.all_names(lang);
        // A fresh name for whichever operation needs one.
        let new_name = model.fresh_name(lang);
        {
            let f = &mut model.files[fi];
            match op {
                _ if !f.present => f.present = true, // re-add a deleted file
                0 => f.funcs.push(Func {
                    name: new_name,
                    calls: Vec::new(),
                }),
                1 if !f.funcs.is_empty() => {
                    let i = rng.below(f.funcs.len());
                    f.funcs.remove(i);
                }
                2 if !f.funcs.is_empty() => {
                    let i = rng.below(f.funcs.len());
                    f.funcs[i].name = new_name;
                }
                3 | 4 if !f.funcs.is_empty() && !names.is_empty() => {
                    let i = rng.below(f.funcs.len());
                    let target = names[rng.below(names.len())].clone();
                    f.funcs[i].calls.push(target);
                }
                5 if !f.funcs.is_empty() => {
                    let i = rng.below(f.funcs.len());
                    if !f.funcs[i].calls.is_empty() {
                        let j = rng.below(f.funcs[i].calls.len());
                        f.funcs[i].calls.remove(j);
                    }
                }
                6 if f.stem != "lib" => f.present = false,
                _ => {
                    let stem = format!("m{step}");
                    let name = new_name;
                    let calls = names.iter().take(1).cloned().collect();
                    model.files.push(FileModel {
                        lang,
                        stem,
                        funcs: vec![Func { name, calls }],
                        present: true,
                    });
                    touched.insert(model.files.len() - 1);
                }
            }
        }
        // Imports and `mod` lines depend on where names live: re-render every file of the
        // language whose text changes, as an editor session would.
        let mut changed = HashSet::new();
        for (i, f) in model.files.iter().enumerate() {
            let path = root.join(f.path());
            if !f.present {
                if path.exists() {
                    std::fs::remove_file(&path).unwrap();
                    changed.insert(f.path());
                }
                continue;
            }
            let text = model.render(f);
            if touched.contains(&i) || std::fs::read_to_string(&path).ok().as_deref() != Some(&text)
            {
                std::fs::write(&path, text).unwrap();
                changed.insert(f.path());
            }
        }
        engine = engine.update(changed.clone(), None).unwrap();
        let fresh = Engine::open_in(&root, config.clone(), None, None).unwrap();
        let (a, b) = (dump(&engine.repo.graph), dump(&fresh.repo.graph));
        if a != b {
            let only_inc: Vec<_> = a.iter().filter(|l| !b.contains(l)).take(10).collect();
            let only_fresh: Vec<_> = b.iter().filter(|l| !a.contains(l)).take(10).collect();
            panic!(
                "seed {seed} step {step} (op {op}, changed {changed:?}):\nonly incremental: {only_inc:#?}\nonly fresh: {only_fresh:#?}"
            );
        }
        assert_eq!(
            engine.sources, fresh.sources,
            "seed {seed} step {step}: sources"
        );
        assert_eq!(engine.repo.graph.edges.len(), fresh.repo.graph.edges.len());
        // Exactly, ids and orders included: a body-only edit is relinked file by file
        // (`link::relink`) and must splice its results where a full link puts them.
        assert!(
            engine.repo.graph == fresh.repo.graph,
            "seed {seed} step {step} (op {op}): the graph equals a fresh one only up to order"
        );
        assert!(
            engine.index.same_as(&fresh.index),
            "seed {seed} step {step}: the updated lexical index differs from a fresh one"
        );
    }
    // The run exercised cross-file resolution, not just isolated files.
    assert!(
        engine.repo.graph.resolutions.len() > 3,
        "seed {seed}: too few resolved calls"
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn incremental_updates_equal_a_fresh_build() {
    for seed in 1..=4 {
        run(seed, 40);
    }
}

#[test]
fn a_changed_global_using_relinks_every_file_of_its_project() {
    let root = crate::testing::temp_repo(
        "update-usings",
        &[
            (
                "src/Lib/Timeout/Clock.cs",
                "namespace Lib.Timeout;\npublic class Clock { public void Wait() {} }\n",
            ),
            (
                "src/Other/Timeout/Clock.cs",
                "namespace Other.Timeout;\npublic class Clock { public void Wait() {} }\n",
            ),
            ("src/Lib/Lib.csproj", "<Project />\n"),
            (
                "src/Lib/Wrap.cs",
                "namespace Lib;\npublic class Wrap { public void Go(Clock c) { c.Wait(); } }\n",
            ),
        ],
    );
    let write = |path: &str, text: &str| std::fs::write(root.join(path), text).unwrap();
    let config = std::sync::Arc::new(crate::Config::default());
    let mut engine = Engine::open_in(&root, config.clone(), None, None).unwrap();
    for (text, project) in [
        ("global using Lib.Timeout;\n", None),
        ("global using Other.Timeout;\n", None),
        (
            "\n",
            Some("<Project><ItemGroup><Using Include=\"Other.Timeout\" /></ItemGroup></Project>\n"),
        ),
    ] {
        write("src/Lib/GlobalUsings.cs", text);
        let mut changed = HashSet::from(["src/Lib/GlobalUsings.cs".to_string()]);
        if let Some(project) = project {
            write("src/Lib/Lib.csproj", project);
            changed.insert("src/Lib/Lib.csproj".to_string());
        }
        engine = engine.update(changed, None).unwrap();
        let fresh = Engine::open_in(&root, config.clone(), None, None).unwrap();
        assert_eq!(
            dump(&engine.repo.graph),
            dump(&fresh.repo.graph),
            "after {text:?}"
        );
        // The clock `Wrap` uses follows the using.
        let used: Vec<&str> = dump(&fresh.repo.graph)
            .into_iter()
            .filter(|l| l.contains("-References->") && l.contains("Wrap") && l.contains("Clock.cs"))
            .map(|l| {
                if l.contains("src/Lib/Timeout") {
                    "Lib"
                } else {
                    "Other"
                }
            })
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let expected = if text.contains("Lib.Timeout") {
            "Lib"
        } else {
            "Other"
        };
        assert_eq!(used, [expected], "after {text:?}");
    }
    let _ = std::fs::remove_dir_all(&root);
}
