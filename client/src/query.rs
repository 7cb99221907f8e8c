//! `fittok query`: the code that answers a question, or a model's answer written from it.

use std::path::PathBuf;

use fittok_connect::DaemonOptions;
use fittok_request::cli::Flags;
use fittok_request::query::Query;

use crate::Failure;

#[derive(clap::Args)]
pub struct QueryArgs {
    /// `[PATH] QUESTION…`, the question quoted or not. The first word is the repository when
    /// it is shaped like a path (has a `/`, or is `.`, `..` or `~…`; it must then exist), or
    /// when it is an existing folder followed by a quoted question; otherwise every word is
    /// the question, about the repository holding the current directory.
    #[arg(required = true, num_args = 1.., value_names = ["PATH", "QUESTION"])]
    args: Vec<String>,
    #[command(flatten)]
    flags: Flags<Query>,
}

pub async fn run(args: QueryArgs, opts: &DaemonOptions, no_daemon: bool) -> Result<(), Failure> {
    let (path, question) =
        path_and_question(&args.args).ok_or_else(|| Failure::new(2, "expected [PATH] QUESTION"))?;
    let repo = crate::resolve_repo(path.as_deref())?;
    let typed = fittok_request::query::QueryArgs {
        question: question.clone(),
        ..fittok_request::query::QueryArgs::from_values(&args.flags.values)
    };
    let req = fittok_request::query::request(repo.display().to_string(), &typed);
    let reply = crate::backend(opts, no_daemon).await?.query(req).await?;
    if typed.json {
        crate::print_out(&reply.json);
        return Ok(());
    }
    if typed.code {
        crate::print_out(&reply.text);
        return Ok(());
    }
    match fittok_llm::Provider::from_vars(typed.model.as_deref(), crate::env_var) {
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

/// Splits the words after `query` into the repository (if one is named) and the question,
/// as the argument's help says.
fn path_and_question(words: &[String]) -> Option<(Option<PathBuf>, String)> {
    let (first, rest) = words.split_first()?;
    if rest.is_empty() {
        return Some((None, first.clone()));
    }
    let path_shaped =
        first.contains('/') || first == "." || first == ".." || first.starts_with('~');
    let folder_then_quoted = rest.len() == 1 && std::path::Path::new(first).is_dir();
    Some(if path_shaped || folder_then_quoted {
        (Some(PathBuf::from(first)), rest.join(" "))
    } else {
        (None, words.join(" "))
    })
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
            // The code slice is the answer's substance: a model that cannot be reached (no
            // network, a bad key, an outage) must not take it away.
            r.map_err(|e| {
                let _ = out.write_all(b"\n");
                crate::print_out(code);
                Failure::new(
                    fittok_proto::failure::EXIT_LLM,
                    format!("the model failed, so the code it would have answered from is above ({e}); --code skips the model"),
                )
            })
        }
        _ = tokio::signal::ctrl_c() => {
            let _ = out.write_all(b"\n");
            Err(Failure::new(fittok_proto::failure::EXIT_INTERRUPTED, "interrupted"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(words: &[&str]) -> (Option<String>, String) {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        let (p, q) = path_and_question(&words).unwrap();
        (p.map(|p| p.display().to_string()), q)
    }

    #[test]
    fn unquoted_questions_are_one_question_and_paths_are_recognised() {
        assert_eq!(
            split(&["how are cookies handled"]),
            (None, "how are cookies handled".into())
        );
        assert_eq!(
            split(&["how", "are", "cookies", "handled"]),
            (None, "how are cookies handled".into())
        );
        assert_eq!(
            split(&[".", "how", "are", "cookies"]),
            (Some(".".into()), "how are cookies".into())
        );
        assert_eq!(
            split(&["/no/such", "q"]),
            (Some("/no/such".into()), "q".into())
        );
        // An existing folder followed by one (quoted) question is the repository.
        let dir = std::env::temp_dir().display().to_string();
        assert_eq!(
            split(&[&dir, "where is x"]),
            (Some(dir.clone()), "where is x".into())
        );
        // A word that is not a folder starts the question.
        assert_eq!(split(&["cookies", "lost"]), (None, "cookies lost".into()));
        assert!(path_and_question(&[]).is_none());
    }
}
