//! The on-disk cache, in redb: vectors and per-file parse results.
//!
//! Vectors are keyed by a 128-bit hash of (model id, embedded text), so unchanged code is never
//! embedded twice, across restarts, branches, worktrees and clones. Parse results are keyed by
//! repository root + file path and carry the file's size, mtime, content hash and the parser's
//! build id: an entry is used only when the content hash and parser match, so a stale entry is
//! never trusted. Every write is one transaction. A store that cannot be opened, or carries
//! another schema version, is moved aside and rebuilt — never trusted, never fatal.

use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, TableDefinition};

use crate::model::ParsedFile;

const SCHEMA_VERSION: u64 = 2;
const LOCKED: &str = "locked";
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const VECTORS: TableDefinition<u128, &[u8]> = TableDefinition::new("vectors");
const PARSES: TableDefinition<&str, &[u8]> = TableDefinition::new("parses");

pub use fittok_parse::PARSER_ID;

/// What the parse cache knows of a file besides its parse.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileStamp {
    pub size: u64,
    pub mtime_ns: u64,
    pub hash: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot create the cache directory {path}: {source}")]
    Dir {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("vector store {path}: {message}")]
    Db { path: PathBuf, message: String },
}

impl StoreError {
    /// Whether another process holds the store (it may free it soon).
    pub fn is_locked(&self) -> bool {
        matches!(self, StoreError::Db { message, .. } if message.starts_with(LOCKED))
    }
}

pub struct Store {
    db: Database,
    path: PathBuf,
    /// Set when a call found the file damaged (redb panicked): the store is not used again in
    /// this process, and the file has been moved aside so the next start rebuilds it.
    broken: std::sync::atomic::AtomicBool,
}

/// Why a store could not be opened.
enum OpenFailure {
    /// Another process holds it: not corruption; the caller goes on without it.
    Locked(String),
    /// The file or its directory cannot be written: not corruption either, and a valid cache
    /// must never be discarded for it.
    Unwritable(String),
    /// Anything else: the file is moved aside and rebuilt.
    Corrupt(String),
}

/// redb's page cache. Its default, 1 GiB, kept every page a cold build writes — kafka's parses,
/// ~400 MB — resident in the daemon for good; reads of the cache are one pass per build.
const STORE_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// Whether an error is the file system refusing access rather than bad content.
fn is_permission(e: &redb::DatabaseError) -> bool {
    use std::io::ErrorKind::{PermissionDenied, ReadOnlyFilesystem};
    match e {
        redb::DatabaseError::Storage(redb::StorageError::Io(io)) => {
            matches!(io.kind(), PermissionDenied | ReadOnlyFilesystem)
        }
        _ => false,
    }
}

pub use fittok_util::hash::fnv;

/// A stable 128-bit key for (model, text): stable across runs, platforms and Rust versions.
pub fn vector_key(model: &str, text: &str) -> u128 {
    let mut bytes = Vec::with_capacity(model.len() + text.len() + 1);
    bytes.extend_from_slice(model.as_bytes());
    bytes.push(0);
    bytes.extend_from_slice(text.as_bytes());
    let a = fnv(&bytes, 0xcbf2_9ce4_8422_2325);
    let b = fnv(&bytes, 0x6c62_272e_07bb_0142);
    (u128::from(a) << 64) | u128::from(b)
}

impl Store {
    /// Opens (or creates) the store at `path`, moving a corrupt or incompatible one aside.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Dir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let db_err = |message: String| StoreError::Db {
            path: path.to_path_buf(),
            message,
        };
        match Self::open_caught(path) {
            Ok(store) => Ok(store),
            Err(OpenFailure::Locked(message)) => Err(db_err(message)),
            Err(OpenFailure::Unwritable(message)) => {
                tracing::warn!(store = %path.display(), %message, "cache not writable; running without it (nothing discarded)");
                Err(db_err(format!(
                    "not writable, running without it: {message}"
                )))
            }
            Err(OpenFailure::Corrupt(message)) => {
                let aside = move_aside(path);
                tracing::warn!(
                    store = %path.display(),
                    moved_to = %aside.display(),
                    %message,
                    "cache unusable; moved aside and rebuilt"
                );
                Self::open_caught(path).map_err(|f| match f {
                    OpenFailure::Locked(m)
                    | OpenFailure::Unwritable(m)
                    | OpenFailure::Corrupt(m) => db_err(m),
                })
            }
        }
    }

    /// [`Store::open_checked`], with a panic inside redb (it panics on some damaged files)
    /// taken as corruption.
    fn open_caught(path: &Path) -> Result<Store, OpenFailure> {
        std::panic::catch_unwind(|| Self::open_checked(path)).unwrap_or_else(|panic| {
            Err(OpenFailure::Corrupt(format!(
                "the store panicked on open: {}",
                panic_message(&panic)
            )))
        })
    }

    fn open_checked(path: &Path) -> Result<Store, OpenFailure> {
        let db = Database::builder()
            .set_cache_size(STORE_CACHE_BYTES)
            .create(path)
            .map_err(|e| match e {
                redb::DatabaseError::DatabaseAlreadyOpen => {
                    OpenFailure::Locked(format!("{LOCKED}: open in another process"))
                }
                e if is_permission(&e) => OpenFailure::Unwritable(e.to_string()),
                e => OpenFailure::Corrupt(e.to_string()),
            })?;
        let bad = |e: &dyn std::fmt::Display| OpenFailure::Corrupt(e.to_string());
        let version = {
            let read = db.begin_read().map_err(|e| bad(&e))?;
            match read.open_table(META) {
                Ok(t) => t.get("schema").map_err(|e| bad(&e))?.map(|v| v.value()),
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(bad(&e)),
            }
        };
        match version {
            Some(SCHEMA_VERSION) => {}
            // Version 1 had vectors only, in the same layout: keep them, add the parse table.
            Some(1) => {
                let w = db.begin_write().map_err(|e| bad(&e))?;
                {
                    let mut meta = w.open_table(META).map_err(|e| bad(&e))?;
                    meta.insert("schema", SCHEMA_VERSION).map_err(|e| bad(&e))?;
                    w.open_table(PARSES).map_err(|e| bad(&e))?;
                }
                w.commit().map_err(|e| bad(&e))?;
            }
            Some(other) => {
                return Err(OpenFailure::Corrupt(format!(
                    "schema version {other}, expected {SCHEMA_VERSION}"
                )));
            }
            None => {
                let w = db.begin_write().map_err(|e| bad(&e))?;
                {
                    let mut meta = w.open_table(META).map_err(|e| bad(&e))?;
                    meta.insert("schema", SCHEMA_VERSION).map_err(|e| bad(&e))?;
                    w.open_table(VECTORS).map_err(|e| bad(&e))?;
                    w.open_table(PARSES).map_err(|e| bad(&e))?;
                }
                w.commit().map_err(|e| bad(&e))?;
            }
        }
        Ok(Store {
            db,
            path: path.to_path_buf(),
            broken: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Runs one call on the database. redb panics on some damaged files (`unreachable` in its
    /// btree); such a panic is the store's failure, not the daemon's: the file is moved aside
    /// (the next start rebuilds it), this process stops using it, and the caller goes on
    /// without a cache.
    fn guarded<T>(&self, call: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        use std::sync::atomic::Ordering;
        if self.broken.load(Ordering::Relaxed) {
            return Err(self.err("damaged earlier in this process; running without it"));
        }
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(call)) {
            Ok(r) => r,
            Err(panic) => {
                if !self.broken.swap(true, Ordering::Relaxed) {
                    let aside = move_aside(&self.path);
                    tracing::warn!(
                        store = %self.path.display(),
                        moved_to = %aside.display(),
                        panic = %panic_message(&panic),
                        "cache damaged; moved aside, running without it until restart"
                    );
                }
                Err(self.err("damaged; moved aside"))
            }
        }
    }

    /// Looks up vectors; a missing or malformed entry is `None`.
    pub fn get_vectors(
        &self,
        keys: &[u128],
        dim: usize,
    ) -> Result<Vec<Option<Vec<f32>>>, StoreError> {
        self.guarded(|| self.get_vectors_inner(keys, dim))
    }

    pub fn put_vectors(&self, items: &[(u128, Vec<f32>)]) -> Result<(), StoreError> {
        self.guarded(|| self.put_vectors_inner(items))
    }

    /// The cached parse of each `(path, stamp)` under `root`, when its content hash and the
    /// parser build match; `None` otherwise (the caller parses and puts it back).
    pub fn get_parses(
        &self,
        root: &str,
        files: &[(&str, FileStamp)],
    ) -> Result<Vec<Option<ParsedFile>>, StoreError> {
        self.guarded(|| self.get_parses_inner(root, files))
    }

    /// The stamps of every file cached under `root`: what a freshness check compares with.
    pub fn parse_stamps(&self, root: &str) -> Result<Vec<(String, FileStamp)>, StoreError> {
        self.guarded(|| self.parse_stamps_inner(root))
    }

    /// Stores parses under `root` and removes entries of files no longer there (`keep`).
    pub fn put_parses(
        &self,
        root: &str,
        parses: &[(FileStamp, &ParsedFile)],
        keep: &std::collections::HashSet<&str>,
    ) -> Result<(), StoreError> {
        self.guarded(|| self.put_parses_inner(root, parses, keep))
    }

    fn err(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::Db {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    fn get_vectors_inner(
        &self,
        keys: &[u128],
        dim: usize,
    ) -> Result<Vec<Option<Vec<f32>>>, StoreError> {
        let read = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = read.open_table(VECTORS).map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(keys.len());
        for &k in keys {
            let v = table.get(k).map_err(|e| self.err(e))?.and_then(|bytes| {
                let bytes = bytes.value();
                (bytes.len() == dim * 4).then(|| {
                    bytes
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        .collect()
                })
            });
            out.push(v);
        }
        Ok(out)
    }

    fn put_vectors_inner(&self, items: &[(u128, Vec<f32>)]) -> Result<(), StoreError> {
        let w = self.db.begin_write().map_err(|e| self.err(e))?;
        {
            let mut table = w.open_table(VECTORS).map_err(|e| self.err(e))?;
            let mut buf = Vec::new();
            for (k, v) in items {
                buf.clear();
                for x in v {
                    buf.extend_from_slice(&x.to_le_bytes());
                }
                table.insert(*k, buf.as_slice()).map_err(|e| self.err(e))?;
            }
        }
        w.commit().map_err(|e| self.err(e))
    }
}

/// Moves a damaged store file aside (`cache.corrupt-<secs>`) and returns where to.
fn move_aside(path: &Path) -> PathBuf {
    let aside = path.with_extension(format!(
        "corrupt-{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    ));
    let _ = std::fs::rename(path, &aside);
    aside
}

/// The message of a caught panic.
fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

fn parse_key(root: &str, path: &str) -> String {
    format!("{root}\0{path}")
}

const STAMP_BYTES: usize = 32;

impl Store {
    fn get_parses_inner(
        &self,
        root: &str,
        files: &[(&str, FileStamp)],
    ) -> Result<Vec<Option<ParsedFile>>, StoreError> {
        let read = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = read.open_table(PARSES).map_err(|e| self.err(e))?;
        let mut bodies = Vec::with_capacity(files.len());
        for (path, stamp) in files {
            let entry = table
                .get(parse_key(root, path).as_str())
                .map_err(|e| self.err(e))?;
            bodies.push(entry.and_then(|v| {
                let bytes = v.value();
                let (head, body) = bytes.split_at_checked(STAMP_BYTES)?;
                let word = |i: usize| {
                    u64::from_le_bytes(head[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
                };
                if word(2) != stamp.hash || word(3) != PARSER_ID {
                    return None;
                }
                Some(body.to_vec())
            }));
        }
        // Decoding is most of a warm start's parse stage (kafka: 5.8k files): on every core.
        Ok(crate::par::map(&bodies, |body| {
            body.as_deref().and_then(|b| serde_json::from_slice(b).ok())
        }))
    }

    fn parse_stamps_inner(&self, root: &str) -> Result<Vec<(String, FileStamp)>, StoreError> {
        let read = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = read.open_table(PARSES).map_err(|e| self.err(e))?;
        let lo = parse_key(root, "");
        let hi = format!("{root}\u{1}");
        let mut out = Vec::new();
        for entry in table
            .range(lo.as_str()..hi.as_str())
            .map_err(|e| self.err(e))?
        {
            let (k, v) = entry.map_err(|e| self.err(e))?;
            let bytes = v.value();
            let Some(head) = bytes.get(..STAMP_BYTES) else {
                continue;
            };
            let word =
                |i: usize| u64::from_le_bytes(head[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
            let path = k.value()[lo.len()..].to_string();
            out.push((
                path,
                FileStamp {
                    size: word(0),
                    mtime_ns: word(1),
                    hash: word(2),
                },
            ));
        }
        Ok(out)
    }

    fn put_parses_inner(
        &self,
        root: &str,
        parses: &[(FileStamp, &ParsedFile)],
        keep: &std::collections::HashSet<&str>,
    ) -> Result<(), StoreError> {
        let stale: Vec<String> = self
            .parse_stamps_inner(root)?
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| !keep.contains(p.as_str()))
            .collect();
        let w = self.db.begin_write().map_err(|e| self.err(e))?;
        {
            let mut table = w.open_table(PARSES).map_err(|e| self.err(e))?;
            let mut buf = Vec::new();
            for (stamp, parsed) in parses {
                buf.clear();
                for word in [stamp.size, stamp.mtime_ns, stamp.hash, PARSER_ID] {
                    buf.extend_from_slice(&word.to_le_bytes());
                }
                serde_json::to_writer(&mut buf, parsed).map_err(|e| self.err(e))?;
                table
                    .insert(parse_key(root, &parsed.path).as_str(), buf.as_slice())
                    .map_err(|e| self.err(e))?;
            }
            for path in &stale {
                table
                    .remove(parse_key(root, path).as_str())
                    .map_err(|e| self.err(e))?;
            }
        }
        w.commit().map_err(|e| self.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory for one test's store, removed when the test ends (pass or fail).
    struct TempStore(PathBuf);

    impl TempStore {
        fn path(&self) -> PathBuf {
            self.0.join("vectors.redb")
        }
    }

    impl Drop for TempStore {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn temp(name: &str) -> TempStore {
        let dir = std::env::temp_dir().join(format!("fittok-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        TempStore(dir)
    }

    #[test]
    fn round_trip_and_reopen() {
        let dir = temp("rt");
        let path = dir.path();
        let k = vector_key("m", "fn a() {}");
        {
            let s = Store::open(&path).unwrap();
            s.put_vectors(&[(k, vec![0.5, -1.0, 2.0])]).unwrap();
        }
        let s = Store::open(&path).unwrap();
        assert_eq!(
            s.get_vectors(&[k, k + 1], 3).unwrap(),
            vec![Some(vec![0.5, -1.0, 2.0]), None]
        );
        assert_ne!(vector_key("m", "a"), vector_key("n", "a"));
    }

    #[test]
    fn parses_are_reused_only_for_the_same_content() {
        let dir = temp("parses");
        let path = dir.path();
        let parsed =
            crate::parse::parse_file("a.py", crate::model::Lang::Python, b"def f():\n    pass\n");
        let stamp = FileStamp {
            size: 18,
            mtime_ns: 7,
            hash: 42,
        };
        let keep: std::collections::HashSet<&str> = ["a.py"].into();
        {
            let s = Store::open(&path).unwrap();
            s.put_parses("/repo", &[(stamp, &parsed)], &keep).unwrap();
        }
        let s = Store::open(&path).unwrap();
        let got = s.get_parses("/repo", &[("a.py", stamp)]).unwrap();
        assert_eq!(got, vec![Some(parsed.clone())]);
        let changed = FileStamp { hash: 43, ..stamp };
        assert_eq!(
            s.get_parses("/repo", &[("a.py", changed)]).unwrap(),
            vec![None]
        );
        assert_eq!(
            s.get_parses("/other", &[("a.py", stamp)]).unwrap(),
            vec![None]
        );
        assert_eq!(
            s.parse_stamps("/repo").unwrap(),
            vec![("a.py".to_string(), stamp)]
        );
        // A file gone from the walk leaves the cache.
        s.put_parses("/repo", &[], &Default::default()).unwrap();
        assert!(s.parse_stamps("/repo").unwrap().is_empty());
    }

    #[test]
    fn corrupt_store_is_moved_aside_and_rebuilt() {
        let dir = temp("corrupt");
        let path = dir.path();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"this is not a redb file, it is garbage").unwrap();
        let s = Store::open(&path).expect("rebuilt");
        assert_eq!(s.get_vectors(&[1], 3).unwrap(), vec![None]);
        let aside = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().contains("corrupt-"));
        assert!(aside, "the corrupt file is kept aside for inspection");
    }

    /// Failure injection: 4 KB blocks of a written store overwritten with noise, as a disk
    /// error or a stray write would. Opening and reading never panic; a damaged store is
    /// moved aside, and the next open starts clean.
    #[test]
    fn overwritten_blocks_never_take_the_process_down() {
        let mut rng = crate::testing::Rng::new(0x9E37_79B9_7F4A_7C15);
        let mut next = move || rng.next_u64();
        let keys: Vec<u128> = (0..1500u32)
            .map(|i| vector_key("m", &i.to_string()))
            .collect();
        let (mut damaged, mut intact) = (0, 0);
        for trial in 0..12 {
            let dir = temp(&format!("blocks-{trial}"));
            let path = dir.path();
            {
                let s = Store::open(&path).unwrap();
                let items: Vec<(u128, Vec<f32>)> =
                    keys.iter().map(|&k| (k, vec![0.25; 64])).collect();
                s.put_vectors(&items).unwrap();
            }
            let mut bytes = std::fs::read(&path).unwrap();
            let blocks = bytes.len() / 4096;
            for _ in 0..4 {
                let b = (next() as usize) % blocks;
                for x in &mut bytes[b * 4096..(b + 1) * 4096] {
                    *x = next() as u8;
                }
            }
            std::fs::write(&path, &bytes).unwrap();
            std::panic::catch_unwind(|| {
                if let Ok(s) = Store::open(&path) {
                    let _ = s.get_vectors(&keys, 64);
                }
            })
            .expect("no panic escapes the store");
            let moved = std::fs::read_dir(path.parent().unwrap())
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().contains("corrupt-"));
            if moved {
                damaged += 1;
            } else {
                intact += 1;
            }
            // Whatever happened, the next open gives a working store.
            let s = Store::open(&path).expect("a store after damage");
            assert!(s.get_vectors(&keys[..3], 64).is_ok());
        }
        eprintln!(
            "overwritten blocks: {damaged} stores found damaged and moved aside, {intact} read through"
        );
    }

    /// A simulated power loss: the store's file copied while another thread commits to it,
    /// so a copy may hold any mix of old and new pages. Every copy opens (or is moved aside
    /// and starts clean), and whatever it returns is a value that was committed — never a
    /// mix, never garbage.
    #[test]
    fn a_copy_taken_mid_write_holds_only_committed_values() {
        let dir = temp("midwrite");
        let path = dir.path();
        let batches = 40u32;
        let per = 50u32;
        let key = |b: u32, i: u32| vector_key("m", &format!("{b}/{i}"));
        let writer = {
            let path = path.clone();
            std::thread::spawn(move || {
                let s = Store::open(&path).unwrap();
                for b in 0..batches {
                    let items: Vec<(u128, Vec<f32>)> =
                        (0..per).map(|i| (key(b, i), vec![b as f32; 32])).collect();
                    s.put_vectors(&items).unwrap();
                }
            })
        };
        let mut copies = Vec::new();
        while !writer.is_finished() {
            if let Ok(bytes) = std::fs::read(&path) {
                copies.push(bytes);
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        writer.join().unwrap();
        copies.push(std::fs::read(&path).unwrap());
        let keys: Vec<(u32, u128)> = (0..batches)
            .flat_map(|b| (0..per).map(move |i| (b, key(b, i))))
            .collect();
        let (mut opened, mut aside) = (0, 0);
        for (n, bytes) in copies.iter().enumerate() {
            let copy = temp(&format!("midwrite-copy-{n}"));
            let p = copy.path();
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, bytes).unwrap();
            let s = Store::open(&p).expect("a store, the copy's or a clean one");
            let got = s
                .get_vectors(&keys.iter().map(|&(_, k)| k).collect::<Vec<_>>(), 32)
                .expect("reads");
            for ((b, _), v) in keys.iter().zip(got) {
                if let Some(v) = v {
                    assert_eq!(v, vec![*b as f32; 32], "copy {n}: a value never written");
                }
            }
            let moved = std::fs::read_dir(p.parent().unwrap())
                .unwrap()
                .flatten()
                .any(|e| e.file_name().to_string_lossy().contains("corrupt-"));
            if moved { aside += 1 } else { opened += 1 }
        }
        assert!(
            copies.len() > 1,
            "the writer finished before a copy was taken"
        );
        eprintln!("mid-write copies: {opened} opened, {aside} moved aside and started clean");
    }

    #[test]
    fn a_permission_error_is_not_corruption() {
        let denied = redb::DatabaseError::Storage(redb::StorageError::Io(std::io::Error::from(
            std::io::ErrorKind::PermissionDenied,
        )));
        assert!(is_permission(&denied));
        let broken = redb::DatabaseError::Storage(redb::StorageError::Corrupted("bad page".into()));
        assert!(!is_permission(&broken));
    }
}
