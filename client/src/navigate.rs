//! `fittok navigate`: callers, callees, uses or impact of one definition, with their code.

use std::path::Path;

use fittok_connect::DaemonOptions;
use fittok_request::cli::Flags;
use fittok_request::navigate::{Navigate, NavigateArgs};

use crate::Failure;

pub async fn run(
    target: String,
    path: Option<&Path>,
    flags: Flags<Navigate>,
    opts: &DaemonOptions,
    no_daemon: bool,
) -> Result<(), Failure> {
    let repo = crate::resolve_repo(path)?;
    let typed = NavigateArgs {
        target,
        ..NavigateArgs::from_values(&flags.values)
    };
    let req = fittok_request::navigate::request(repo.display().to_string(), &typed);
    let json = req.json;
    let reply = crate::backend(opts, no_daemon).await?.navigate(req).await?;
    crate::print_out(if json { &reply.json } else { &reply.text });
    Ok(())
}
