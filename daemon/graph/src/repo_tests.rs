//! A build withdrawn by its caller stops between files, not after them all.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{BuildOptions, Phase, build_with_sources};
use crate::walk::WalkError;

#[test]
fn a_cancelled_build_stops_parsing_and_says_so() {
    let dir = std::env::temp_dir().join(format!("fittok-cancel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let files = 400;
    for i in 0..files {
        std::fs::write(
            dir.join(format!("m{i}.py")),
            format!("def f{i}():\n    return {i}\n"),
        )
        .expect("write");
    }
    let cancel = AtomicBool::new(false);
    let parsed = Mutex::new(0);
    let progress = |phase: Phase, done: usize, _total: usize| {
        if phase == Phase::Parse {
            *parsed.lock().expect("lock") = done;
            cancel.store(true, Ordering::Relaxed);
        }
    };
    let built = build_with_sources(
        &dir,
        BuildOptions {
            progress: Some(&progress),
            cancel: Some(&cancel),
            ..BuildOptions::default()
        },
    );
    assert!(
        matches!(built, Err(WalkError::Cancelled)),
        "the build says it was cancelled"
    );
    let done = *parsed.lock().expect("lock");
    assert!(
        done > 0 && done < files,
        "parsing stopped part way: {done} of {files}"
    );

    // Unset, the same build completes.
    let whole = build_with_sources(&dir, BuildOptions::default()).expect("build");
    assert_eq!(whole.0.graph.files.len(), files);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn csharp_files_import_what_their_project_declares_for_all_of_them() {
    // Two of each class, in two namespaces; no file names either namespace in a `using`: the
    // test project's file imports one, a `global using` in the library the other.
    let classes: Vec<(String, String)> = ["Lib", "Other"]
        .iter()
        .flat_map(|ns| {
            [
                (
                    format!("src/{ns}/Retry/Policy.cs"),
                    format!("namespace {ns}.Retry;\npublic class Policy {{ public void Run() {{}} }}\n"),
                ),
                (
                    format!("src/{ns}/Timeout/Clock.cs"),
                    format!("namespace {ns}.Timeout;\npublic class Clock {{ public void Wait() {{}} }}\n"),
                ),
            ]
        })
        .collect();
    let mut files: Vec<(&str, &str)> = classes
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    files.extend([
        ("src/Lib/Lib.csproj", "<Project Sdk=\"Microsoft.NET.Sdk\" />\n"),
        ("src/Lib/GlobalUsings.cs", "global using Lib.Timeout;\n"),
        (
            "src/Lib/Wrap.cs",
            "namespace Lib;\npublic class Wrap { public void Go(Clock c) { c.Wait(); } }\n",
        ),
        (
            "test/Lib.Tests/Lib.Tests.csproj",
            "<Project>\n  <ItemGroup>\n    <Using Include=\"Lib.Retry\" />\n  </ItemGroup>\n</Project>\n",
        ),
        (
            "test/Lib.Tests/RetrySpecs.cs",
            "namespace Lib.Tests;\npublic class RetrySpecs { public void Runs(Policy p) { p.Run(); } }\n",
        ),
    ]);
    let dir = crate::testing::temp_repo("csproj", &files);
    let (repo, _) = build_with_sources(&dir, BuildOptions::default()).expect("build");
    let g = &repo.graph;
    // The files of the types `from` uses.
    let uses = |from: &str| -> Vec<String> {
        let node = crate::testing::node_named(g, from);
        g.targets(node, &[crate::link::EdgeKind::References])
            .map(|t| g.file_of(t).path.clone())
            .collect()
    };
    assert_eq!(
        uses("Go"),
        ["src/Lib/Timeout/Clock.cs"],
        "the library's global using"
    );
    assert_eq!(
        uses("Runs"),
        ["src/Lib/Retry/Policy.cs"],
        "the test project's item"
    );
    // The library's global using is the library's alone.
    let specs = g
        .files
        .iter()
        .find(|f| f.path.ends_with("RetrySpecs.cs"))
        .expect("specs");
    let inherited: Vec<&str> = specs
        .inherited_imports
        .iter()
        .map(|i| i.module.as_str())
        .collect();
    assert_eq!(inherited, ["Lib.Retry"]);
    let _ = std::fs::remove_dir_all(&dir);
}
