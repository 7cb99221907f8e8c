//! `fittokd`: the engine's command line (the daemon itself arrives with its own issue).

use std::path::PathBuf;

use anyhow::Context;
use clap::{Parser, Subcommand};

mod inspect;

#[derive(Parser)]
#[command(name = "fittokd", version, about = "fittok's engine and daemon")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse a repository and print, per language: files parsed/skipped, nodes and edges by
    /// kind, resolution rate, parse time.
    Inspect {
        path: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// Skip files larger than this many bytes.
        #[arg(long, default_value_t = 1024 * 1024)]
        max_file_bytes: u64,
        /// Also list the N most frequent unresolved references (receiver and name).
        #[arg(long, value_name = "N")]
        unresolved: Option<usize>,
    },
}

fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("FITTOK_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Inspect {
            path,
            json,
            max_file_bytes,
            unresolved,
        } => {
            let opts = fittok_engine::walk::WalkOptions { max_file_bytes };
            let repo = fittok_engine::repo::build(&path, &opts)
                .with_context(|| format!("cannot index {}", path.display()))?;
            let out = if json {
                inspect::json(&repo)
            } else {
                inspect::text(&repo)
            };
            print!("{out}");
            if let Some(n) = unresolved {
                print!("{}", inspect::unresolved(&repo, n));
            }
        }
    }
    Ok(())
}
