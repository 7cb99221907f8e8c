//! A snapshot restores exactly what a build makes; a changed, damaged, foreign or missing one
//! never changes an answer — the repository is then updated or built afresh.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::engine::{Engine, Query};
use crate::{Config, snapshot};

struct Fixture {
    dir: PathBuf,
    root: PathBuf,
    cache: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Fixture {
        let dir = std::env::temp_dir().join(format!("fittok-snap-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let root = dir.join("repo");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(
            root.join("src/lib.rs"),
            "/// Applies the discount.\npub fn discount(price: u32) -> u32 { price - rebate(price) }\n\
             fn rebate(p: u32) -> u32 { p / 10 }\n",
        )
        .unwrap();
        std::fs::write(
            root.join("src/cart.py"),
            "from shop import discount\n\nclass Cart:\n    def total(self, items):\n        return sum(items)\n",
        )
        .unwrap();
        std::fs::write(root.join("README.md"), "# Shop\n\nCarts and discounts.\n").unwrap();
        Fixture {
            cache: dir.join("cache"),
            root: root.canonicalize().unwrap(),
            dir,
        }
    }

    fn config(&self) -> Arc<Config> {
        Arc::new(Config {
            cache_dir: Some(self.cache.clone()),
            ..Config::default()
        })
    }

    fn open(&self) -> Engine {
        Engine::open_in(&self.root, self.config(), None, None).unwrap()
    }

    /// The same repository built with no cache at all.
    fn fresh(&self) -> Engine {
        Engine::open_in(&self.root, Arc::new(Config::default()), None, None).unwrap()
    }

    fn snapshot_path(&self) -> PathBuf {
        snapshot::path_for(&self.cache, &self.root)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn answer(e: &Engine, q: &str) -> String {
    e.query(&Query {
        question: q.into(),
        budget: 800,
        ..Query::default()
    })
    .text
}

/// Everything a build makes, compared part by part.
fn assert_same(a: &Engine, b: &Engine) {
    assert_eq!(a.repo.graph, b.repo.graph);
    assert_eq!(a.repo.stamps, b.repo.stamps);
    assert_eq!(a.repo.walk.skipped, b.repo.walk.skipped);
    assert_eq!(a.sources, b.sources);
    assert!(a.index.same_as(&b.index));
    assert_eq!(a.index.walk.len(), b.index.walk.len());
    for q in ["how is the discount applied?", "Cart total", "rebate"] {
        assert_eq!(answer(a, q), answer(b, q), "{q}");
    }
}

/// Rewrites `src/lib.rs` so the discount calls a new `coupon`, dated after the snapshot.
fn change_discount_to_coupon(fx: &Fixture) {
    let lib = fx.root.join("src/lib.rs");
    std::fs::write(
        &lib,
        "/// Applies the discount.\npub fn discount(price: u32) -> u32 { price - coupon(price) }\n\
         fn coupon(p: u32) -> u32 { p / 5 }\n",
    )
    .unwrap();
    set_mtime_later(&lib);
}

fn set_mtime_later(path: &Path) {
    let f = std::fs::File::options().append(true).open(path).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    f.set_modified(later).unwrap();
}

#[test]
fn a_saved_snapshot_restores_the_same_engine_and_leaves_other_files_alone() {
    let fx = Fixture::new("same");
    let built = fx.open();
    assert!(!built.is_restored());
    // A file of the user's in our directory, and one named like a temporary of ours.
    let dir = fx.cache.join(snapshot::DIR);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "mine").unwrap();
    built.save_snapshot().unwrap();
    assert!(fx.snapshot_path().is_file());
    let restored = fx.open();
    assert!(restored.is_restored());
    assert!(restored.timings.snapshot > std::time::Duration::ZERO);
    assert_same(&restored, &built);
    assert_same(&restored, &fx.fresh());
    // Saving what was just restored writes nothing; the user's file is untouched and no
    // temporary file is left behind.
    restored.save_snapshot().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "mine"
    );
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn a_change_since_the_snapshot_is_applied_on_top_of_it() {
    let fx = Fixture::new("stale");
    fx.open().save_snapshot().unwrap();
    change_discount_to_coupon(&fx);
    std::fs::write(
        fx.root.join("src/new.py"),
        "def coupon_code():\n    return 'X'\n",
    )
    .unwrap();
    std::fs::remove_file(fx.root.join("src/cart.py")).unwrap();
    let opened = fx.open();
    assert!(!opened.is_restored());
    assert_same(&opened, &fx.fresh());
    assert!(answer(&opened, "coupon").contains("fn coupon(p: u32)"));
}

#[test]
fn a_damaged_truncated_or_foreign_snapshot_is_never_trusted() {
    let fx = Fixture::new("damaged");
    fx.open().save_snapshot().unwrap();
    let path = fx.snapshot_path();
    let good = std::fs::read(&path).unwrap();
    let fresh = fx.fresh();
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("one byte flipped", flipped),
        ("truncated", good[..good.len() - 7].to_vec()),
        ("header only", good[..20].to_vec()),
        ("empty", Vec::new()),
        ("not ours", b"some other program's data".repeat(10)),
    ];
    for (what, bytes) in cases {
        std::fs::write(&path, &bytes).unwrap();
        assert!(
            snapshot::load(&path, &fx.root, &Default::default()).is_err(),
            "{what}"
        );
        let opened = fx.open();
        assert!(!opened.is_restored(), "{what}");
        assert_same(&opened, &fresh);
    }
    // Written under other walk options (scrubbing off): ignored, not an error.
    std::fs::write(&path, &good).unwrap();
    let other = crate::walk::WalkOptions {
        scrub: false,
        ..Default::default()
    };
    assert!(snapshot::load(&path, &fx.root, &other).unwrap().is_none());
    // Another repository's snapshot under this one's name: ignored.
    let elsewhere = fx.dir.join("elsewhere");
    assert!(
        snapshot::load(&path, &elsewhere, &Default::default())
            .unwrap()
            .is_none()
    );
    // Missing: none.
    std::fs::remove_file(&path).unwrap();
    assert!(
        snapshot::load(&path, &fx.root, &Default::default())
            .unwrap()
            .is_none()
    );
}

#[test]
fn the_checksum_is_the_same_fed_whole_or_in_pieces() {
    let bytes: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 3) as u8).collect();
    let whole = super::checksum(&bytes);
    let mut rng = crate::testing::Rng::new(3);
    for _ in 0..50 {
        let mut c = super::Checksum::new();
        let mut at = 0;
        while at < bytes.len() {
            let n = (rng.below(20)).min(bytes.len() - at);
            c.update(&bytes[at..at + n]);
            at += n;
        }
        assert_eq!(c.finish(), whole);
    }
    let mut one_off = bytes.clone();
    one_off[500] ^= 1;
    assert_ne!(super::checksum(&one_off), whole);
    assert_ne!(super::checksum(&bytes[..999]), whole);
}

#[test]
fn only_temporaries_of_dead_writers_are_removed() {
    let fx = Fixture::new("temps");
    let dir = fx.cache.join(snapshot::DIR);
    std::fs::create_dir_all(&dir).unwrap();
    let name = fx
        .snapshot_path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // A pid no process has (above the kernel's maximum), ours (alive), and the user's files.
    let dead = dir.join(format!(".{name}.4294967295.0.tmp"));
    let live = dir.join(format!(".{name}.{}.999.tmp", std::process::id()));
    let users = [
        dir.join(format!(".{name}.notes.tmp")),
        dir.join(format!(".{name}.4294967295.0.tmp.bak")),
        dir.join("other.tmp"),
    ];
    for f in users.iter().chain([&dead, &live]) {
        std::fs::write(f, "x").unwrap();
    }
    fx.open().save_snapshot().unwrap();
    assert!(!dead.exists());
    assert!(live.exists());
    for f in &users {
        assert!(f.exists(), "{}", f.display());
    }
    assert!(fx.open().is_restored());
}

/// The repository's own files, path by path: what must survive anything the cache goes through.
fn user_files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                dirs.push(e.path());
            } else {
                out.push((e.path(), std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_writer_killed_at_any_step_or_a_power_loss_never_changes_an_answer() {
    use crate::snapshot::{SaveStep, save_until};
    for step in [
        SaveStep::Created,
        SaveStep::Payload,
        SaveStep::Synced,
        SaveStep::Renamed,
    ] {
        for power_loss in [false, true] {
            let what = format!("{step:?}, power loss {power_loss}");
            let fx = Fixture::new(&format!("kill-{step:?}-{power_loss}"));
            fx.open().save_snapshot().unwrap();
            let path = fx.snapshot_path();
            let old = std::fs::read(&path).unwrap();
            change_discount_to_coupon(&fx);
            let mine = user_files(&fx.root);
            let next = fx.open();
            save_until(
                &path,
                &next.repo,
                &next.sources,
                &next.index,
                &Default::default(),
                Some(step),
            )
            .unwrap();
            let dir = path.parent().unwrap();
            let temporaries: Vec<PathBuf> = std::fs::read_dir(dir)
                .unwrap()
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "tmp"))
                .collect();
            if step < SaveStep::Renamed {
                assert_eq!(temporaries.len(), 1, "{what}");
            }
            if power_loss {
                match step {
                    // Unsynced bytes are lost: the temporary keeps a part of what was written.
                    SaveStep::Created | SaveStep::Payload => {
                        for t in &temporaries {
                            let bytes = std::fs::read(t).unwrap();
                            std::fs::write(t, &bytes[..bytes.len() / 2]).unwrap();
                        }
                    }
                    SaveStep::Synced => {}
                    // The rename was in the folder's unsynced entries: the old snapshot is
                    // back under its name, the new file a temporary again.
                    SaveStep::Renamed => {
                        let new = std::fs::read(&path).unwrap();
                        let name = path.file_name().unwrap().to_string_lossy();
                        std::fs::write(
                            dir.join(format!(".{name}.{}.99.tmp", std::process::id())),
                            new,
                        )
                        .unwrap();
                        std::fs::write(&path, &old).unwrap();
                    }
                }
            }
            let reopened = fx.open();
            assert_same(&reopened, &fx.fresh());
            assert!(
                answer(&reopened, "coupon").contains("fn coupon(p: u32)"),
                "{what}"
            );
            assert_eq!(user_files(&fx.root), mine, "{what}: the repository's files");
            // And the cache goes on working: saved again, it restores the same engine.
            reopened.save_snapshot().unwrap();
            assert_same(&fx.open(), &fx.fresh());
        }
    }
}
