//! `fittok index`: make a repository resident and embed it, with progress on stderr.

use std::io::{IsTerminal, Write};
use std::path::Path;

use fittok_connect::DaemonOptions;
use fittok_request::cli::Flags;
use fittok_request::index::Index;

use crate::Failure;

pub async fn run(
    path: Option<&Path>,
    flags: Flags<Index>,
    opts: &DaemonOptions,
    no_daemon: bool,
) -> Result<(), Failure> {
    let repo = crate::resolve_repo(path)?;
    let typed = fittok_request::index::IndexArgs::from_values(&flags.values);
    let req = fittok_request::index::request(repo.display().to_string(), &typed);
    let bar = std::io::stderr().is_terminal();
    let mut last_phase = String::new();
    let mut backend = crate::backend(opts, no_daemon).await?;
    backend
        .index(req, |p| {
            if bar {
                draw_bar(&p.phase, p.done, p.total, &p.message);
            } else if p.phase != last_phase || p.phase == "ready" || p.phase == "done" {
                if !p.message.is_empty() {
                    eprintln!("{}: {}", p.phase, p.message);
                } else {
                    eprintln!("{}: {}/{}", p.phase, p.done, p.total);
                }
            }
            if p.phase == "ready" || p.phase == "done" {
                outln!("{}", p.message);
            }
            last_phase = p.phase;
        })
        .await?;
    if bar {
        eprintln!();
    }
    Ok(())
}

fn draw_bar(phase: &str, done: u64, total: u64, message: &str) {
    let width = 30;
    let filled = (done.min(total) * width as u64)
        .checked_div(total)
        .map_or(width, |f| f as usize);
    let line = if phase == "ready" || phase == "done" {
        message.to_string()
    } else {
        format!(
            "{phase:<8}[{}{}] {done}/{total}",
            "#".repeat(filled),
            ".".repeat(width - filled)
        )
    };
    eprint!("\r\x1b[2K{line}");
    let _ = std::io::stderr().flush();
}
