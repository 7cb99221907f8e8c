//! A repository dropped from the resident set lets go of its memory at once, whoever still
//! holds the resident (the embedder's queue, an update under way).

use std::sync::Arc;

use fittok_engine::config::Config;
use fittok_engine::engine::Engine;

use super::Resident;

#[test]
fn a_released_resident_holds_nothing_and_takes_no_snapshot() {
    let dir = std::env::temp_dir().join(format!("fittok-release-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("a.py"), "def f():\n    return 1\n").expect("write");
    let engine = Arc::new(Engine::open(&dir, Arc::new(Config::default())).expect("open"));
    let resident = Resident::new(dir.clone());
    resident.publish(engine.clone());
    assert!(resident.snapshot().is_some());
    resident.release();
    assert!(resident.snapshot().is_none());
    // An update that finishes after the release publishes nothing.
    resident.publish(engine.clone());
    assert!(resident.snapshot().is_none());
    assert_eq!(
        Arc::strong_count(&engine),
        1,
        "only the test holds the engine"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_update_of_a_released_resident_is_given_up() {
    let dir = std::env::temp_dir().join(format!("fittok-release-update-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("a.py"), "def f():\n    return 1\n").expect("write");
    let engine = Engine::open(&dir, Arc::new(Config::default())).expect("open");
    std::fs::write(dir.join("b.py"), "def g():\n    return 2\n").expect("write");
    let changed: std::collections::HashSet<String> = ["b.py".to_string()].into();
    let resident = Resident::new(dir.clone());
    let kept = engine
        .update_unless_cancelled(changed.clone(), None, Some(&resident.released))
        .expect("update");
    assert_eq!(kept.repo.graph.files.len(), 2);
    resident.release();
    let given_up = engine.update_unless_cancelled(changed, None, Some(&resident.released));
    assert!(
        matches!(
            given_up,
            Err(fittok_engine::engine::EngineError::Walk(
                fittok_engine::walk::WalkError::Cancelled
            ))
        ),
        "the update stops once its repository is released"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
