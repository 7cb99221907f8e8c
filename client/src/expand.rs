//! `fittok expand`: the whole source of ids from an answer.

use fittok_connect::DaemonOptions;
use fittok_request::cli::Flags;
use fittok_request::expand::Expand;
use fittok_request::{Request, Value};

use crate::Failure;

pub async fn run(
    ids: Vec<String>,
    flags: Flags<Expand>,
    opts: &DaemonOptions,
    no_daemon: bool,
) -> Result<(), Failure> {
    let repo = flags.values.opt_text("repo").map(std::path::PathBuf::from);
    let repo = crate::resolve_repo(repo.as_deref())?;
    let mut values = flags.values;
    values
        .set(Expand::PARAMS, "ids", Value::List(ids))
        .map_err(|e| Failure::bad(e.to_string()))?;
    let req = fittok_request::expand::request(repo.display().to_string(), &values);
    let reply = crate::backend(opts, no_daemon).await?.expand(req).await?;
    crate::print_out(&reply.text);
    Ok(())
}
