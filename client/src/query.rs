//! `fittok query`: the code that answers a question, or a model's answer written from it.

use std::path::PathBuf;

use fittok_connect::DaemonOptions;
use fittok_request::cli::Flags;
use fittok_request::query::Query;
use fittok_request::{Request, Value};

use crate::Failure;

#[derive(clap::Args)]
pub struct QueryArgs {
    /// `[PATH] QUESTION`: with two arguments the first is the repository and must exist.
    #[arg(required = true, num_args = 1..=2, value_names = ["PATH", "QUESTION"])]
    args: Vec<String>,
    #[command(flatten)]
    flags: Flags<Query>,
}

pub async fn run(args: QueryArgs, opts: &DaemonOptions, no_daemon: bool) -> Result<(), Failure> {
    let (path, question) = match args.args.as_slice() {
        [q] => (None, q.clone()),
        [p, q] => (Some(PathBuf::from(p)), q.clone()),
        _ => return Err(Failure::new(2, "expected [PATH] QUESTION")),
    };
    let repo = crate::resolve_repo(path.as_deref())?;
    let mut values = args.flags.values;
    values
        .set(Query::PARAMS, "question", Value::Text(question.clone()))
        .map_err(|e| Failure::bad(e.to_string()))?;
    let req = fittok_request::query::request(repo.display().to_string(), &values);
    let reply = crate::backend(opts, no_daemon).await?.query(req).await?;
    if values.bool("json") {
        crate::print_out(&reply.json);
        return Ok(());
    }
    if values.bool("code") {
        crate::print_out(&reply.text);
        return Ok(());
    }
    let model = values.opt_text("model");
    match fittok_llm::Provider::from_vars(model.as_deref(), crate::env_var) {
        Some(provider) => llm_answer(&provider, &question, &reply.text).await,
        None => {
            crate::print_out(&reply.text);
            eprintln!(
                "fittok: no LLM key is set, so this is the code that answers, not a written answer.\nfittok: set ANTHROPIC_API_KEY, OPENAI_API_KEY or FITTOK_LLM_BASE_URL for one; --code prints the code without this hint."
            );
            Ok(())
        }
    }
}

/// Streams the model's answer to stdout; Ctrl-C stops it cleanly.
async fn llm_answer(
    provider: &fittok_llm::Provider,
    question: &str,
    code: &str,
) -> Result<(), Failure> {
    use std::io::Write;
    let mut out = std::io::stdout();
    tokio::select! {
        r = provider.answer(question, code, &mut out) => {
            r.map_err(|e| Failure::new(fittok_proto::failure::EXIT_LLM, e.to_string()))
        }
        _ = tokio::signal::ctrl_c() => {
            let _ = out.write_all(b"\n");
            Err(Failure::new(fittok_proto::failure::EXIT_INTERRUPTED, "interrupted"))
        }
    }
}
