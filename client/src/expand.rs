//! `fittok expand`: the whole source of ids from an answer.

use fittok_connect::DaemonOptions;
use fittok_request::cli::Flags;
use fittok_request::expand::{Expand, ExpandArgs};

use crate::Failure;

pub async fn run(
    ids: Vec<String>,
    flags: Flags<Expand>,
    opts: &DaemonOptions,
    no_daemon: bool,
) -> Result<(), Failure> {
    let typed = ExpandArgs {
        ids,
        ..ExpandArgs::from_values(&flags.values)
    };
    let repo = typed.repo.as_deref().map(std::path::Path::new);
    let repo = crate::resolve_repo(repo)?;
    let req = fittok_request::expand::request(repo.display().to_string(), &typed);
    let reply = crate::backend(opts, no_daemon).await?.expand(req).await?;
    crate::print_out(&reply.text);
    Ok(())
}
