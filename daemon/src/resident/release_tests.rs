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
