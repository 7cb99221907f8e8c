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
