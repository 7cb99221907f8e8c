//! The embedding model on first use: all-MiniLM-L6-v2's `config.json`, `tokenizer.json` and
//! `model.safetensors`, fetched with the Hugging Face hub's URL layout
//! (`{endpoint}/{repo}/resolve/{revision}/{file}`), each checked against its sha256 before it
//! takes its place. A download resumes where an interrupted one stopped (`*.part` and an HTTP
//! range); a file whose bytes do not match is thrown away, never used. Files land by rename,
//! so a model directory holds either nothing or a whole, checked file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

/// Where the model comes from. The binary builds it from `HF_ENDPOINT` and the revision; the
/// library reads no environment.
#[derive(Debug, Clone)]
pub struct ModelSource {
    /// `https://huggingface.co`, or a mirror with the same layout.
    pub endpoint: String,
    pub repo: String,
    pub revision: String,
    /// (file name, sha256 hex, size in bytes).
    pub files: Vec<(String, String, u64)>,
}

/// The repository the weights come from.
pub const MODEL_REPO: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// The files of all-MiniLM-L6-v2, pinned by content: a changed upstream file is refused.
pub const MODEL_FILES: [(&str, &str, u64); 3] = [
    (
        "config.json",
        "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        612,
    ),
    (
        "tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        466_247,
    ),
    (
        "model.safetensors",
        "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        90_868_376,
    ),
];

impl ModelSource {
    /// all-MiniLM-L6-v2 from `endpoint` at `revision`.
    pub fn minilm(endpoint: &str, revision: &str) -> ModelSource {
        ModelSource {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            repo: MODEL_REPO.to_string(),
            revision: revision.to_string(),
            files: MODEL_FILES
                .iter()
                .map(|(n, h, s)| (n.to_string(), h.to_string(), *s))
                .collect(),
        }
    }

    fn url(&self, file: &str) -> String {
        format!(
            "{}/{}/resolve/{}/{file}",
            self.endpoint, self.repo, self.revision
        )
    }

    /// Bytes of every file.
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.2).sum()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum DownloadError {
    #[error("{url}: {message}")]
    Http { url: String, message: String },
    #[error("{file} does not match its checksum (got {got}); discarded, nothing used")]
    Checksum { file: String, got: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// How a download is going, read by `status` while it runs.
#[derive(Debug, Default)]
pub struct Progress {
    pub done: AtomicU64,
    pub total: AtomicU64,
}

impl Progress {
    /// `34 % of 91 MB`.
    pub fn describe(&self) -> String {
        let done = self.done.load(Ordering::Relaxed);
        let total = self.total.load(Ordering::Relaxed).max(1);
        format!(
            "{:.0} % of {:.0} MB",
            100.0 * done as f64 / total as f64,
            total as f64 / 1e6
        )
    }
}

/// Resumptions of one file before the download is given up.
const RETRIES: u64 = 4;

/// Whether `file` of `size` bytes has landed in `dest` (whole: it was renamed into place only
/// after its checksum matched).
fn landed(dest: &Path, file: &str, size: u64) -> bool {
    std::fs::metadata(dest.join(file)).is_ok_and(|m| m.len() == size)
}

/// Fetches every missing file of `source` into `dest`, resuming `.part` files.
pub fn fetch(source: &ModelSource, dest: &Path, progress: &Progress) -> Result<(), DownloadError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DownloadError::Io { path, source }
    };
    std::fs::create_dir_all(dest).map_err(io(dest))?;
    progress
        .total
        .store(source.total_bytes(), Ordering::Relaxed);
    let already: u64 = source
        .files
        .iter()
        .filter(|(n, _, s)| landed(dest, n, *s))
        .map(|f| f.2)
        .sum();
    progress.done.store(already, Ordering::Relaxed);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(io(dest))?;
    let client = reqwest::Client::builder()
        .connect_timeout(std::time::Duration::from_secs(15))
        .read_timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| DownloadError::Http {
            url: source.endpoint.clone(),
            message: e.to_string(),
        })?;
    for (name, sha, size) in &source.files {
        if landed(dest, name, *size) {
            continue;
        }
        let target = dest.join(name);
        let part = dest.join(format!("{name}.part"));
        // A connection that drops mid-file is resumed from what arrived (a range request),
        // a few times, before the download is given up (the `.part` stays for the next start).
        let mut attempt = 0;
        loop {
            match runtime.block_on(fetch_one(&client, &source.url(name), &part, progress)) {
                Ok(()) => break,
                Err(DownloadError::Http { url, message }) if attempt < RETRIES => {
                    attempt += 1;
                    // Resuming is what a `.part` with bytes in it allows; before any byte
                    // arrived it is a plain retry.
                    let resumes = std::fs::metadata(&part).is_ok_and(|m| m.len() > 0);
                    let what = if resumes {
                        "interrupted; resuming"
                    } else {
                        "failed; retrying"
                    };
                    tracing::info!(%url, %message, attempt, "model download {what}");
                    std::thread::sleep(std::time::Duration::from_millis(500 * attempt));
                }
                Err(e) => return Err(e),
            }
        }
        let got = sha256_of(&part).map_err(io(&part))?;
        if got != *sha {
            let fetched = std::fs::metadata(&part).map_or(0, |m| m.len());
            let _ = std::fs::remove_file(&part);
            progress.done.fetch_sub(fetched, Ordering::Relaxed);
            return Err(DownloadError::Checksum {
                file: name.clone(),
                got,
            });
        }
        std::fs::rename(&part, &target).map_err(io(&target))?;
    }
    Ok(())
}

/// Appends the rest of `url` to `part` (a range request when part of it is there).
async fn fetch_one(
    client: &reqwest::Client,
    url: &str,
    part: &Path,
    progress: &Progress,
) -> Result<(), DownloadError> {
    let http = |message: String| DownloadError::Http {
        url: url.to_string(),
        message,
    };
    let io = |source| DownloadError::Io {
        path: part.to_path_buf(),
        source,
    };
    let have = std::fs::metadata(part).map_or(0, |m| m.len());
    let mut request = client.get(url);
    if have > 0 {
        request = request.header(reqwest::header::RANGE, format!("bytes={have}-"));
    }
    let mut response = request.send().await.map_err(|e| http(cause(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(http(format!("HTTP {status}")));
    }
    // 206: the rest follows; 200: the server sent it all, so start over.
    let append = have > 0 && status == reqwest::StatusCode::PARTIAL_CONTENT;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(append)
        .write(true)
        .truncate(!append)
        .open(part)
        .map_err(io)?;
    if append {
        progress.done.fetch_add(have, Ordering::Relaxed);
    }
    while let Some(chunk) = response.chunk().await.map_err(|e| http(cause(&e)))? {
        file.write_all(&chunk).map_err(io)?;
        progress
            .done
            .fetch_add(chunk.len() as u64, Ordering::Relaxed);
    }
    file.sync_all().map_err(io)
}

/// What went wrong with a request, without the URL (the error names it once): the innermost
/// cause, which says why ("Connection refused", "dns error: failed to lookup address"),
/// where reqwest's own message only says that sending failed.
fn cause(e: &reqwest::Error) -> String {
    let mut innermost: Option<&dyn std::error::Error> = None;
    let mut next = std::error::Error::source(e);
    while let Some(inner) = next {
        innermost = Some(inner);
        next = inner.source();
    }
    let what = if e.is_connect() {
        "cannot connect"
    } else if e.is_timeout() {
        "timed out"
    } else if e.is_body() || e.is_decode() {
        "the connection dropped"
    } else {
        "the request failed"
    };
    match innermost.map(|i| i.to_string()) {
        Some(why) if !why.is_empty() => format!("{what}: {why}"),
        _ => what.to_string(),
    }
}

fn sha256_of(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut hasher = Sha256::new();
    let mut file = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}
