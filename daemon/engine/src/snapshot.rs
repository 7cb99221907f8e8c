//! A resident repository on disk: its graph, lexical indexes, PageRank and source bytes in one
//! file, so that a restart only lists the repository and compares stamps (issue 15: a warm
//! restart re-parsed from the cache, linked and tokenized everything again — ~2.5 s on kafka).
//!
//! Writer [`save`], reader [`load`]. One file per repository root in `<cache>/snapshots/`,
//! named by a hash of the root; written to a temporary name beside it and renamed, so a reader
//! sees the old file or the new one, never a mix (a writer that died leaves its temporary file,
//! removed by the next writer once its process is gone). The file carries the engine's build id and a
//! hash of the walk options: another build's or another configuration's snapshot is ignored,
//! never trusted. A checksum over the payload catches a damaged file (a crash between write and
//! rename leaves only a temporary file; a torn or truncated file fails the checksum): it is
//! reported and the repository is built from scratch. Nothing here deletes or overwrites a
//! file it did not name itself.

use std::io::Write;
use std::path::{Path, PathBuf};

use bincode::Options;

use crate::index::{Index, Sources};
use crate::repo::RepoGraph;
use crate::walk::WalkOptions;

/// The directory inside the cache directory.
pub const DIR: &str = "snapshots";

const MAGIC: &[u8; 8] = b"fittoksn";
const FORMAT: u32 = 1;
/// magic, format, engine id, walk hash, metadata length, source count, checksum.
const HEADER_BYTES: usize = 8 + 4 + 8 * 5;

/// Identifies the build of everything a snapshot holds: the parser, the linker and the
/// indexes. Snapshots written by a build that differs in any of them are ignored.
pub const ENGINE_ID: u64 = fittok_util::source_id::parse_id(env!("FITTOK_SOURCE_ID"))
    ^ fittok_graph::SOURCE_ID.rotate_left(13)
    ^ fittok_parse::PARSER_ID.rotate_left(29);

#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    #[error("snapshot {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("snapshot {path} is damaged ({what}); the repository is built afresh")]
    Damaged { path: PathBuf, what: String },
    #[error("snapshot {path}: cannot encode: {what}")]
    Encode { path: PathBuf, what: String },
}

/// What a snapshot restores.
pub struct Restored {
    pub repo: RepoGraph,
    pub sources: Sources,
    pub index: Index,
}

/// The snapshot file of `root` inside `cache_dir`.
pub fn path_for(cache_dir: &Path, root: &Path) -> PathBuf {
    let key = checksum(root.to_string_lossy().as_bytes());
    cache_dir.join(DIR).join(format!("{key:016x}.snap"))
}

fn walk_hash(walk: &WalkOptions) -> u64 {
    checksum(format!("{walk:?}").as_bytes())
}

/// A 64-bit FNV-style hash over 8-byte words (a byte-wise one over kafka's ~180 MB took a
/// quarter of a second), fed in pieces of any size.
#[derive(Clone)]
struct Checksum {
    h: u64,
    carry: [u8; 8],
    carried: usize,
    len: u64,
}

impl Checksum {
    fn new() -> Checksum {
        Checksum {
            h: 0xcbf2_9ce4_8422_2325,
            carry: [0; 8],
            carried: 0,
            len: 0,
        }
    }

    fn word(&mut self, w: [u8; 8]) {
        self.h = (self.h ^ u64::from_le_bytes(w)).wrapping_mul(0x0000_0100_0000_01b3);
        self.h ^= self.h >> 29;
    }

    fn update(&mut self, mut bytes: &[u8]) {
        self.len += bytes.len() as u64;
        if self.carried > 0 {
            let take = (8 - self.carried).min(bytes.len());
            self.carry[self.carried..self.carried + take].copy_from_slice(&bytes[..take]);
            self.carried += take;
            bytes = &bytes[take..];
            if self.carried < 8 {
                return;
            }
            self.word(self.carry);
            self.carried = 0;
        }
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut b = [0u8; 8];
            b.copy_from_slice(w);
            self.word(b);
        }
        let rest = words.remainder();
        self.carry[..rest.len()].copy_from_slice(rest);
        self.carried = rest.len();
    }

    fn finish(&self) -> u64 {
        let mut h = self.h;
        for &b in &self.carry[..self.carried] {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h ^ self.len
    }
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut c = Checksum::new();
    c.update(bytes);
    c.finish()
}

/// Counts and checksums what passes through to the file.
struct Hashing<W> {
    inner: W,
    sum: Checksum,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sum.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

fn codec(limit: u64) -> impl Options {
    bincode::DefaultOptions::new().with_limit(limit)
}

#[derive(serde::Serialize)]
struct MetaOut<'a> {
    root: String,
    repo: &'a RepoGraph,
    index: &'a Index,
}

#[derive(serde::Deserialize)]
struct MetaIn {
    root: String,
    repo: RepoGraph,
    index: Index,
}

/// Writes the snapshot of a built repository to `path` (temporary file, then rename),
/// streaming: the file is never whole in memory.
pub fn save(
    path: &Path,
    repo: &RepoGraph,
    sources: &Sources,
    index: &Index,
    walk: &WalkOptions,
) -> Result<(), SnapshotError> {
    save_until(path, repo, sources, index, walk, None)
}

/// The steps of [`save`], for failure-injection tests: a writer stopped after one leaves what a
/// crash there would.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SaveStep {
    /// The temporary file exists, holding the header's placeholder.
    Created,
    /// Every byte written but the header, nothing flushed.
    Payload,
    /// The temporary file complete and synced, not renamed.
    #[cfg_attr(not(test), allow(dead_code))]
    Synced,
    /// Renamed into place, the folder not synced.
    Renamed,
}

/// [`save`], stopping after `stop_after` (tests), as a process killed there would.
pub(crate) fn save_until(
    path: &Path,
    repo: &RepoGraph,
    sources: &Sources,
    index: &Index,
    walk: &WalkOptions,
    stop_after: Option<SaveStep>,
) -> Result<(), SnapshotError> {
    let io = |source| SnapshotError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io)?;
    let name = path
        .file_name()
        .map_or("snapshot".into(), |n| n.to_string_lossy().into_owned());
    remove_dead_temporaries(dir, &name);
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let meta = MetaOut {
        root: repo.root.to_string_lossy().into_owned(),
        repo,
        index,
    };
    let written = write_to(&tmp, &meta, sources, walk_hash(walk), stop_after);
    if stop_after.is_some_and(|s| s < SaveStep::Renamed) {
        return written;
    }
    let written = written.and_then(|()| {
        std::fs::rename(&tmp, path).map_err(|source| SnapshotError::Io {
            path: path.to_path_buf(),
            source,
        })
    });
    if stop_after == Some(SaveStep::Renamed) {
        return written;
    }
    // The rename reaches the disk with the folder's entries: a power loss then leaves the old
    // snapshot or the new one (the file itself was flushed before the rename).
    if written.is_ok()
        && let Ok(d) = std::fs::File::open(dir)
    {
        let _ = d.sync_all();
    }
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Header placeholder, metadata, source lengths and bytes, then the header in place.
fn write_to(
    tmp: &Path,
    meta: &MetaOut<'_>,
    sources: &Sources,
    walk_hash: u64,
    stop_after: Option<SaveStep>,
) -> Result<(), SnapshotError> {
    use std::io::{Seek, SeekFrom};
    let io = |source| SnapshotError::Io {
        path: tmp.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::create(tmp).map_err(io)?;
    // The header's lengths and checksum are known at the end: written last, in place.
    file.write_all(&[0u8; HEADER_BYTES]).map_err(io)?;
    if stop_after == Some(SaveStep::Created) {
        return Ok(());
    }
    let mut out = Hashing {
        inner: std::io::BufWriter::with_capacity(1 << 20, file),
        sum: Checksum::new(),
    };
    codec(u64::MAX)
        .serialize_into(&mut out, meta)
        .map_err(|e| SnapshotError::Encode {
            path: tmp.to_path_buf(),
            what: e.to_string(),
        })?;
    let meta_len = out.sum.len;
    for s in sources {
        out.write_all(&(s.len() as u64).to_le_bytes()).map_err(io)?;
    }
    for s in sources {
        out.write_all(s).map_err(io)?;
    }
    let sum = out.sum.finish();
    let mut file = out.inner.into_inner().map_err(|e| io(e.into_error()))?;
    if stop_after == Some(SaveStep::Payload) {
        return Ok(());
    }
    let mut header = Vec::with_capacity(HEADER_BYTES);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&FORMAT.to_le_bytes());
    header.extend_from_slice(&ENGINE_ID.to_le_bytes());
    header.extend_from_slice(&walk_hash.to_le_bytes());
    header.extend_from_slice(&meta_len.to_le_bytes());
    header.extend_from_slice(&(sources.len() as u64).to_le_bytes());
    header.extend_from_slice(&sum.to_le_bytes());
    file.seek(SeekFrom::Start(0)).map_err(io)?;
    file.write_all(&header).map_err(io)?;
    file.flush().map_err(io)?;
    file.sync_all().map_err(io)
}

/// Temporary files of ours for snapshot `name` whose writer is gone (a process stopped while
/// writing): `.NAME.PID.N.tmp` with no live PID. Only where /proc tells (Linux).
fn remove_dead_temporaries(dir: &Path, name: &str) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let prefix = format!(".{name}.");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = file
            .strip_prefix(&prefix)
            .and_then(|r| r.strip_suffix(".tmp"))
        else {
            continue;
        };
        let mut parts = rest.split('.');
        let (Some(pid), Some(n), None) = (parts.next(), parts.next(), parts.next()) else {
            continue;
        };
        if pid.parse::<u32>().is_err() || n.parse::<u64>().is_err() {
            continue;
        }
        if !proc.join(pid).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

impl<R: std::io::Read> std::io::Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.sum.update(&buf[..n]);
        Ok(n)
    }
}

/// Reads the snapshot at `path` for `root`: `None` when there is none, or it was written by
/// another build, for another root or under other walk options; an error when it is damaged.
/// Only the metadata is ever whole in memory, not the sources (a 180 MB buffer freed after a
/// restore stayed in the daemon's RSS).
pub fn load(
    path: &Path,
    root: &Path,
    walk: &WalkOptions,
) -> Result<Option<Restored>, SnapshotError> {
    use std::io::Read;
    let io = |source| SnapshotError::Io {
        path: path.to_path_buf(),
        source,
    };
    let damaged = |what: &str| SnapshotError::Damaged {
        path: path.to_path_buf(),
        what: what.to_string(),
    };
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(io(source)),
    };
    let size = file.metadata().map_err(io)?.len();
    let mut header = [0u8; HEADER_BYTES];
    file.read_exact(&mut header).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            damaged("shorter than its header")
        } else {
            io(e)
        }
    })?;
    if &header[..8] != MAGIC {
        return Err(damaged("not a snapshot"));
    }
    let u64_at = |i: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&header[i..i + 8]);
        u64::from_le_bytes(b)
    };
    let format = u32::from_le_bytes([header[8], header[9], header[10], header[11]]);
    if format != FORMAT || u64_at(12) != ENGINE_ID || u64_at(20) != walk_hash(walk) {
        tracing::debug!(path = %path.display(), "snapshot of another build or configuration");
        return Ok(None);
    }
    let (meta_len, count, sum) = (u64_at(28), u64_at(36), u64_at(44));
    let payload = size - HEADER_BYTES as u64;
    if meta_len > payload || count > (payload - meta_len) / 8 {
        return Err(damaged("lengths"));
    }
    let mut input = Hashing {
        inner: std::io::BufReader::with_capacity(1 << 20, file),
        sum: Checksum::new(),
    };
    let eof_is_damage = |e: std::io::Error| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            damaged("truncated")
        } else {
            io(e)
        }
    };
    // The metadata is decoded from memory (through a reader, bincode's small reads took
    // 0.8 s on kafka instead of 0.3 s); the sources, the bulk of the file, are streamed.
    let mut meta = vec![0u8; meta_len as usize];
    input.read_exact(&mut meta).map_err(eof_is_damage)?;
    let meta: MetaIn = codec(meta_len)
        .deserialize(&meta)
        .map_err(|e| damaged(&e.to_string()))?;
    let mut lengths = vec![0u8; count as usize * 8];
    input.read_exact(&mut lengths).map_err(eof_is_damage)?;
    let mut sources: Sources = Vec::with_capacity(count as usize);
    let mut left = payload - meta_len - count * 8;
    for len in lengths.chunks_exact(8) {
        let mut b = [0u8; 8];
        b.copy_from_slice(len);
        let len = u64::from_le_bytes(b);
        if len > left {
            return Err(damaged("source bytes"));
        }
        left -= len;
        let mut bytes = vec![0u8; len as usize];
        input.read_exact(&mut bytes).map_err(eof_is_damage)?;
        sources.push(std::sync::Arc::from(bytes));
    }
    if left != 0 || input.sum.finish() != sum {
        return Err(damaged("checksum"));
    }
    if meta.root != root.to_string_lossy() {
        return Ok(None);
    }
    let g = &meta.repo.graph;
    let count = count as usize;
    let consistent = g.files.len() == count
        && meta.repo.stamps.len() == count
        && g.file_start.len() == count + 1
        && g.file_start.last().copied() == Some(g.nodes.len() as u32)
        && meta.index.pagerank.len() == g.nodes.len()
        && meta.index.walk.len() == g.nodes.len();
    if !consistent {
        return Err(damaged("parts of different sizes"));
    }
    Ok(Some(Restored {
        repo: meta.repo,
        sources,
        index: meta.index,
    }))
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
