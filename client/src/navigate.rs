//! `fittok navigate`: callers, callees, uses or impact of one definition, with their code.

use std::path::Path;

use fittok_connect::DaemonOptions;
use fittok_request::cli::Flags;
use fittok_request::navigate::Navigate;
use fittok_request::{Request, Value};

use crate::Failure;

pub async fn run(
    target: String,
    path: Option<&Path>,
    flags: Flags<Navigate>,
    opts: &DaemonOptions,
    no_daemon: bool,
) -> Result<(), Failure> {
    let repo = crate::resolve_repo(path)?;
    let mut values = flags.values;
    values
        .set(Navigate::PARAMS, "target", Value::Text(target))
        .map_err(|e| Failure::bad(e.to_string()))?;
    let req = fittok_request::navigate::request(repo.display().to_string(), &values);
    let json = req.json;
    let reply = crate::backend(opts, no_daemon).await?.navigate(req).await?;
    crate::print_out(if json { &reply.json } else { &reply.text });
    Ok(())
}
