//! `fittok map`: the codebase map, printed or written as a Fitted Information Tree.

use std::path::Path;

use fittok_connect::DaemonOptions;
use fittok_request::cli::Flags;
use fittok_request::map::Map;

use crate::Failure;

pub async fn run(
    path: Option<&Path>,
    flags: Flags<Map>,
    opts: &DaemonOptions,
    no_daemon: bool,
) -> Result<(), Failure> {
    let repo = crate::resolve_repo(path)?;
    let typed = fittok_request::map::MapArgs::from_values(&flags.values);
    let fit_dir = match &typed.fit_dir {
        Some(d) => {
            let d = Path::new(&d);
            std::fs::create_dir_all(d).map_err(|e| {
                Failure::new(
                    fittok_proto::failure::EXIT_FAILED,
                    format!("cannot create {}: {e}", d.display()),
                )
            })?;
            d.canonicalize()
                .map_err(|e| Failure::bad(format!("{}: {e}", d.display())))?
                .display()
                .to_string()
        }
        None => String::new(),
    };
    let req = fittok_request::map::request(repo.display().to_string(), fit_dir, &typed);
    let reply = crate::backend(opts, no_daemon).await?.map(req).await?;
    if reply.files.is_empty() {
        crate::print_out(&reply.markdown);
    }
    for f in &reply.files {
        outln!("{:>8} tokens  {}", f.tokens, f.path);
    }
    Ok(())
}
