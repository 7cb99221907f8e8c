//! `fittok graph`: the code graph as one self-contained HTML page.

use std::path::PathBuf;

use fittok_connect::DaemonOptions;
use fittok_request::cli::Flags;
use fittok_request::graph::Graph;

use crate::Failure;

#[derive(clap::Args)]
pub struct GraphArgs {
    /// Repository (default: the one containing the current directory).
    path: Option<PathBuf>,
    #[command(flatten)]
    flags: Flags<Graph>,
    /// Output file (default: `<repository>-graph.html` in fittok's cache directory, never in
    /// the repository).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
}

pub async fn run(args: GraphArgs, opts: &DaemonOptions, no_daemon: bool) -> Result<(), Failure> {
    let repo = crate::resolve_repo(args.path.as_deref())?;
    let typed = fittok_request::graph::GraphArgs::from_values(&args.flags.values);
    let req = fittok_request::graph::request(repo.display().to_string(), &typed);
    let reply = crate::backend(opts, no_daemon).await?.graph(req).await?;
    let name = repo
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repository".into());
    let out = match args.output {
        Some(out) => out,
        None => {
            let dir = fittok_proto::paths::cache_dir().join("graphs");
            std::fs::create_dir_all(&dir).map_err(|e| {
                let why = format!("cannot create {}: {e}; name a file with -o", dir.display());
                Failure::new(fittok_proto::failure::EXIT_FAILED, why)
            })?;
            dir.join(format!("{name}-graph.html"))
        }
    };
    write_durably(&out, reply.html.as_bytes()).map_err(|e| {
        Failure::new(
            fittok_proto::failure::EXIT_FAILED,
            format!("cannot write {}: {e}", out.display()),
        )
    })?;
    outln!("{} ({} nodes)", out.display(), reply.nodes);
    if args.open {
        let opener = if cfg!(target_os = "macos") {
            "open"
        } else {
            "xdg-open"
        };
        let opened = std::process::Command::new(opener).arg(&out).status();
        if !opened.as_ref().is_ok_and(|s| s.success()) {
            let why = match opened {
                Ok(status) => format!("{opener} failed ({status})"),
                Err(e) => format!("{opener}: {e}"),
            };
            return Err(Failure::new(
                fittok_proto::failure::EXIT_FAILED,
                format!(
                    "no browser could be opened ({why}); open {} yourself",
                    out.display()
                ),
            ));
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file beside it, flushed to disk before the
/// rename and the folder after it: a crash leaves the old page or the new one.
fn write_durably(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.fittok-tmp-{}", std::process::id()));
    let written = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written?;
    // The rename itself is durable once the folder is; not every platform can open one.
    if let Ok(d) = std::fs::File::open(&dir) {
        let _ = d.sync_all();
    }
    Ok(())
}
