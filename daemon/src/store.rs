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

/// Identifies the parser build: parse results from another one are re-parsed. Computed by
/// build.rs from the sources of the walk, model and parse stages.
pub const PARSER_ID: u64 = match u64::from_str_radix(env!("FITTOK_PARSER_ID"), 16) {
    Ok(id) => id,
    Err(_) => 0,
};

/// What the parse cache knows of a file besides its parse.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
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

pub struct Store {
    db: Database,
    path: PathBuf,
}

/// FNV-1a over bytes from a given offset basis.
pub fn fnv(bytes: &[u8], basis: u64) -> u64 {
    let mut h = basis;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

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
        match Self::open_checked(path) {
            Ok(store) => Ok(store),
            // Another process holds it: that is not corruption; the caller goes on without it.
            Err(message) if message.starts_with(LOCKED) => Err(StoreError::Db {
                path: path.to_path_buf(),
                message,
            }),
            Err(message) => {
                let aside = path.with_extension(format!(
                    "corrupt-{}",
                    std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_secs())
                        .unwrap_or(0)
                ));
                tracing::warn!(
                    store = %path.display(),
                    moved_to = %aside.display(),
                    %message,
                    "vector store unusable; moved aside and rebuilt"
                );
                let _ = std::fs::rename(path, &aside);
                Self::open_checked(path).map_err(|message| StoreError::Db {
                    path: path.to_path_buf(),
                    message,
                })
            }
        }
    }

    fn open_checked(path: &Path) -> Result<Store, String> {
        let db = Database::create(path).map_err(|e| match e {
            redb::DatabaseError::DatabaseAlreadyOpen => {
                format!("{LOCKED}: open in another process")
            }
            e => e.to_string(),
        })?;
        let version = {
            let read = db.begin_read().map_err(|e| e.to_string())?;
            match read.open_table(META) {
                Ok(t) => t
                    .get("schema")
                    .map_err(|e| e.to_string())?
                    .map(|v| v.value()),
                Err(redb::TableError::TableDoesNotExist(_)) => None,
                Err(e) => return Err(e.to_string()),
            }
        };
        match version {
            Some(SCHEMA_VERSION) => {}
            // Version 1 had vectors only, in the same layout: keep them, add the parse table.
            Some(1) => {
                let w = db.begin_write().map_err(|e| e.to_string())?;
                {
                    let mut meta = w.open_table(META).map_err(|e| e.to_string())?;
                    meta.insert("schema", SCHEMA_VERSION)
                        .map_err(|e| e.to_string())?;
                    w.open_table(PARSES).map_err(|e| e.to_string())?;
                }
                w.commit().map_err(|e| e.to_string())?;
            }
            Some(other) => {
                return Err(format!("schema version {other}, expected {SCHEMA_VERSION}"));
            }
            None => {
                let w = db.begin_write().map_err(|e| e.to_string())?;
                {
                    let mut meta = w.open_table(META).map_err(|e| e.to_string())?;
                    meta.insert("schema", SCHEMA_VERSION)
                        .map_err(|e| e.to_string())?;
                    w.open_table(VECTORS).map_err(|e| e.to_string())?;
                    w.open_table(PARSES).map_err(|e| e.to_string())?;
                }
                w.commit().map_err(|e| e.to_string())?;
            }
        }
        Ok(Store {
            db,
            path: path.to_path_buf(),
        })
    }

    fn err(&self, e: impl std::fmt::Display) -> StoreError {
        StoreError::Db {
            path: self.path.clone(),
            message: e.to_string(),
        }
    }

    /// Looks up vectors; a missing or malformed entry is `None`.
    pub fn get_vectors(
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

    pub fn put_vectors(&self, items: &[(u128, Vec<f32>)]) -> Result<(), StoreError> {
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

fn parse_key(root: &str, path: &str) -> String {
    format!("{root}\0{path}")
}

const STAMP_BYTES: usize = 32;

impl Store {
    /// The cached parse of each `(path, stamp)` under `root`, when its content hash and the
    /// parser build match; `None` otherwise (the caller parses and puts it back).
    pub fn get_parses(
        &self,
        root: &str,
        files: &[(&str, FileStamp)],
    ) -> Result<Vec<Option<ParsedFile>>, StoreError> {
        let read = self.db.begin_read().map_err(|e| self.err(e))?;
        let table = read.open_table(PARSES).map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(files.len());
        for (path, stamp) in files {
            let entry = table
                .get(parse_key(root, path).as_str())
                .map_err(|e| self.err(e))?;
            out.push(entry.and_then(|v| {
                let bytes = v.value();
                let (head, body) = bytes.split_at_checked(STAMP_BYTES)?;
                let word = |i: usize| {
                    u64::from_le_bytes(head[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]))
                };
                if word(2) != stamp.hash || word(3) != PARSER_ID {
                    return None;
                }
                serde_json::from_slice(body).ok()
            }));
        }
        Ok(out)
    }

    /// The stamps of every file cached under `root`: what a freshness check compares with.
    pub fn parse_stamps(&self, root: &str) -> Result<Vec<(String, FileStamp)>, StoreError> {
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

    /// Stores parses under `root` and removes entries of files no longer there (`keep`).
    pub fn put_parses(
        &self,
        root: &str,
        parses: &[(FileStamp, &ParsedFile)],
        keep: &std::collections::HashSet<&str>,
    ) -> Result<(), StoreError> {
        let stale: Vec<String> = self
            .parse_stamps(root)?
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

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fittok-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join("vectors.redb")
    }

    #[test]
    fn round_trip_and_reopen() {
        let path = temp("rt");
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
        let path = temp("parses");
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
        let path = temp("corrupt");
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
}
