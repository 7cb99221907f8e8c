//! `fittok hook`: Claude Code's `UserPromptSubmit` hook. Reads the hook's JSON on stdin; when
//! the prompt is a question about the code of a repository the daemon can answer in time, it
//! prints the answer as additional context. On anything else — chit-chat, no repository, no
//! daemon, a slow index, bad input — it prints nothing and exits 0: a hook must never block
//! or break the prompt.

use std::path::Path;
use std::time::Duration;

use fittok_connect::DaemonOptions;
use fittok_request::query::{Query, QueryArgs};
use fittok_request::{Request, Surface, Values};

/// What the hook needs from its input.
#[derive(Debug, Default)]
pub struct HookInput {
    pub prompt: String,
    pub cwd: Option<String>,
}

pub fn parse_input(json: &str) -> Option<HookInput> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    Some(HookInput {
        prompt: v.get("prompt")?.as_str()?.to_string(),
        cwd: v.get("cwd").and_then(|c| c.as_str()).map(str::to_string),
    })
}

/// Words that open small talk: a prompt made of them and a few more is not a question.
const SMALL_TALK: &[&str] = &[
    "hi", "hello", "hey", "thanks", "thank", "thx", "ok", "okay", "cool", "great", "nice", "yes",
    "no", "yep", "nope", "sure", "lol", "bye", "good", "perfect", "awesome", "sorry", "please",
    "continue", "go", "done", "wow",
];

/// Requests for prose that no code answers.
const CREATIVE: &[&str] = &[
    "write a poem",
    "write me a poem",
    "write a story",
    "write me a story",
    "write a song",
    "write a haiku",
    "write a limerick",
    "tell me a joke",
];

/// The cheap test: a slash command, a few words of small talk, a request for a poem. Anything
/// else goes to the daemon, whose verdict on the match decides (a keyword list would miss "How does
/// requests strip the Authorization header on redirects?").
pub fn is_chit_chat(prompt: &str) -> bool {
    let p = prompt.trim();
    if p.starts_with('/') || p.chars().filter(|c| c.is_alphabetic()).count() < 8 {
        return true;
    }
    let lower = p.to_lowercase();
    if CREATIVE.iter().any(|c| lower.starts_with(c)) {
        return true;
    }
    // "please write me a short poem about autumn": a writing request, however it opens,
    // unless it names code (a backtick, a path, an identifier).
    let names_code = p.contains('`') || p.contains('/') || p.contains("::") || p.contains('_');
    if !names_code
        && lower.contains("write")
        && [
            "poem", "haiku", "limerick", "song", "story", "joke", "essay", "letter", "note to",
        ]
        .iter()
        .any(|w| lower.contains(w))
    {
        return true;
    }
    let words: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words.len() < 3 || (words.len() <= 6 && words.first().is_some_and(|w| SMALL_TALK.contains(w)))
}

/// The hook's settings.
#[derive(Debug, Clone)]
pub struct HookOptions {
    /// `FITTOK_HOOK_BUDGET`, else the query definition's hook default.
    pub budget: u32,
    /// Give up (print nothing) after this long (`FITTOK_HOOK_TIMEOUT_MS`, default 8000).
    pub timeout: Duration,
}

impl HookOptions {
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> HookOptions {
        let num = |name: &str| var(name).and_then(|v| v.trim().parse::<u64>().ok());
        let budget = num("FITTOK_HOOK_BUDGET")
            .and_then(|b| fittok_proto::check_budget(b).ok())
            .unwrap_or_else(|| {
                QueryArgs::from_values(&Values::defaults(Query::PARAMS, Surface::Hook)).budget
            });
        HookOptions {
            budget,
            timeout: Duration::from_millis(num("FITTOK_HOOK_TIMEOUT_MS").unwrap_or(8000)),
        }
    }
}

/// `fittok hook`: reads the input on stdin, prints the context or nothing; never fails.
pub async fn run(daemon: &DaemonOptions, no_daemon: bool) -> Result<(), crate::Failure> {
    use std::io::Read;
    let mut input = String::new();
    let read = std::io::stdin()
        .take(1 << 20)
        .read_to_string(&mut input)
        .is_ok();
    if let Some(input) = read.then(|| parse_input(&input)).flatten() {
        let opts = HookOptions::from_vars(crate::env_var);
        if let Some(out) = respond(&input, daemon, no_daemon, &opts).await {
            crate::print_out(&out);
        }
    }
    Ok(())
}

/// The hook's output for an input, or `None` to print nothing.
pub async fn respond(
    input: &HookInput,
    daemon: &DaemonOptions,
    no_daemon: bool,
    opts: &HookOptions,
) -> Option<String> {
    if is_chit_chat(&input.prompt) {
        return None;
    }
    let cwd = input.cwd.as_deref().map(Path::new)?;
    // Only inside a repository: never index a home directory because a prompt came from it.
    let root = cwd
        .ancestors()
        .find(|d| d.join(".git").exists())?
        .to_path_buf();
    let work = async {
        // The first prompt of a session too: start the daemon and wait for it (it answers
        // lexically within about a second), all within the hook's timeout; with
        // FITTOK_NO_DAEMON, answer in this process's child instead.
        let mut backend = fittok_connect::backend::Backend::new(
            daemon,
            no_daemon,
            fittok_connect::backend::StderrTo::Inherit,
        )
        .await
        .ok()?;
        fittok_proto::check_budget(u64::from(opts.budget)).ok()?;
        let args = QueryArgs {
            question: input.prompt.clone(),
            budget: opts.budget,
            ..QueryArgs::from_values(&Values::defaults(Query::PARAMS, Surface::Hook))
        };
        let req = fittok_request::query::request(root.display().to_string(), &args);
        let reply = backend.query(req).await.ok()?;
        if reply.node_ids.is_empty() || !reply.matched {
            return None;
        }
        let out = serde_json::json!({
            "hookSpecificOutput": {
                "hookEventName": "UserPromptSubmit",
                "additionalContext": reply.text,
            }
        });
        Some(out.to_string())
    };
    tokio::time::timeout(opts.timeout, work)
        .await
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chit_chat_stays_home_and_questions_go_to_the_daemon() {
        for question in [
            "How does the retry logic work when a request times out?",
            "How does requests strip the Authorization header on redirects?",
            "where is parse_config called from",
            "fix the bug in src/walk.rs where symlinks are followed",
            "What is the capital of France?",
            "write a test for parse_config",
            "write the story of how `Session.send` retries",
        ] {
            assert!(!is_chit_chat(question), "{question}");
        }
        for chat in [
            "thanks!",
            "hi there",
            "ok, sounds good",
            "/clear",
            "yes please go ahead",
            "write me a poem about autumn leaves",
            "please write me a short poem about autumn",
            "Could you write a song about friendship?",
        ] {
            assert!(is_chit_chat(chat), "{chat}");
        }
    }

    #[test]
    fn hook_input_parses_or_is_none() {
        let i = parse_input(
            r#"{"session_id":"s","cwd":"/r","hook_event_name":"UserPromptSubmit","prompt":"how?"}"#,
        )
        .unwrap();
        assert_eq!(i.prompt, "how?");
        assert_eq!(i.cwd.as_deref(), Some("/r"));
        assert!(parse_input("not json").is_none());
        assert!(parse_input("{}").is_none());
    }
}
