//! Stage 9 (part): the on-disk vector cache, in redb.
//!
//! Vectors are keyed by a 128-bit hash of (model id, embedded text), so unchanged code is never
//! embedded twice, across restarts, branches, worktrees and clones. Every write is one
//! transaction. A store that cannot be opened, or carries another schema version, is moved
//! aside and rebuilt — never trusted, never fatal.

use std::path::{Path, PathBuf};

use redb::{Database, ReadableDatabase, TableDefinition};

const SCHEMA_VERSION: u64 = 1;
const LOCKED: &str = "locked";
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const VECTORS: TableDefinition<u128, &[u8]> = TableDefinition::new("vectors");

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

pub struct VectorStore {
    db: Database,
    path: PathBuf,
}

/// FNV-1a over bytes from a given offset basis.
fn fnv(bytes: &[u8], basis: u64) -> u64 {
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

impl VectorStore {
    /// Opens (or creates) the store at `path`, moving a corrupt or incompatible one aside.
    pub fn open(path: &Path) -> Result<VectorStore, StoreError> {
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

    fn open_checked(path: &Path) -> Result<VectorStore, String> {
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
                }
                w.commit().map_err(|e| e.to_string())?;
            }
        }
        Ok(VectorStore {
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
    pub fn get_many(&self, keys: &[u128], dim: usize) -> Result<Vec<Option<Vec<f32>>>, StoreError> {
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

    pub fn put_many(&self, items: &[(u128, Vec<f32>)]) -> Result<(), StoreError> {
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
            let s = VectorStore::open(&path).unwrap();
            s.put_many(&[(k, vec![0.5, -1.0, 2.0])]).unwrap();
        }
        let s = VectorStore::open(&path).unwrap();
        assert_eq!(
            s.get_many(&[k, k + 1], 3).unwrap(),
            vec![Some(vec![0.5, -1.0, 2.0]), None]
        );
        assert_ne!(vector_key("m", "a"), vector_key("n", "a"));
    }

    #[test]
    fn corrupt_store_is_moved_aside_and_rebuilt() {
        let path = temp("corrupt");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"this is not a redb file, it is garbage").unwrap();
        let s = VectorStore::open(&path).expect("rebuilt");
        assert_eq!(s.get_many(&[1], 3).unwrap(), vec![None]);
        let aside = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().contains("corrupt-"));
        assert!(aside, "the corrupt file is kept aside for inspection");
    }
}
