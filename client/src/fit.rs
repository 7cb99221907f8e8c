//! `fittok fit generate|measure`: Fitted Information Trees.

use fittok_connect::DaemonOptions;
use fittok_proto::v1::{FitAction, FitVerdict};
use fittok_request::cli::FitCommand;

use crate::Failure;

pub async fn run(
    command: &FitCommand,
    opts: &DaemonOptions,
    no_daemon: bool,
) -> Result<(), Failure> {
    let (action, path, values) = command.parts();
    let shown = path.display().to_string();
    let path = path
        .canonicalize()
        .map_err(|_| Failure::bad(format!("{shown} does not exist")))?;
    let req = fittok_request::fit::request(
        action,
        path.display().to_string(),
        &fittok_request::fit::FitArgs::from_values(values),
    );
    let reply = crate::backend(opts, no_daemon).await?.fit(req).await?;
    out!("{}", fittok_request::fit::reply_text(action, &reply));
    if action == FitAction::Measure {
        let code = fittok_request::fit::measure_exit(reply.verdict());
        if code != 0 {
            let over = if reply.verdict() == FitVerdict::OverHard {
                "over the hard threshold"
            } else {
                "over the soft threshold"
            };
            return Err(Failure::new(code, over));
        }
    }
    Ok(())
}
