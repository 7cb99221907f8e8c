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
    /// Output file (default: `<repository>-graph.html` in the current directory).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Open the page in the default browser.
    #[arg(long)]
    open: bool,
}

pub async fn run(args: GraphArgs, opts: &DaemonOptions, no_daemon: bool) -> Result<(), Failure> {
    let repo = crate::resolve_repo(args.path.as_deref())?;
    let req = fittok_request::graph::request(repo.display().to_string(), &args.flags.values);
    let reply = crate::backend(opts, no_daemon).await?.graph(req).await?;
    let name = repo
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "repository".into());
    let out = args
        .output
        .unwrap_or_else(|| PathBuf::from(format!("{name}-graph.html")));
    std::fs::write(&out, &reply.html).map_err(|e| {
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
        let _ = std::process::Command::new(opener).arg(&out).status();
    }
    Ok(())
}
