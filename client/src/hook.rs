//! `fittok hook`: Claude Code's `UserPromptSubmit` hook. Reads the hook's JSON on stdin; when
//! the prompt is a question about the code of a repository the daemon can answer in time, it
//! prints the answer as additional context. On anything else — chit-chat, no repository, no
//! daemon, a slow index, bad input — it prints nothing and exits 0: a hook must never block
//! or break the prompt.

use std::path::Path;
use std::time::Duration;

use crate::v1::QueryRequest;

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

const CODE_WORDS: &[&str] = &[
    "function",
    "functions",
    "method",
    "methods",
    "class",
    "classes",
    "module",
    "modules",
    "file",
    "files",
    "code",
    "codebase",
    "repo",
    "repository",
    "implement",
    "implemented",
    "implementation",
    "bug",
    "error",
    "exception",
    "crash",
    "test",
    "tests",
    "api",
    "endpoint",
    "handler",
    "parse",
    "parser",
    "config",
    "configuration",
    "refactor",
    "fix",
    "call",
    "calls",
    "called",
    "import",
    "struct",
    "trait",
    "interface",
    "type",
    "variable",
    "field",
    "schema",
    "query",
    "database",
    "request",
    "response",
    "cache",
    "thread",
    "async",
    "compile",
    "build",
    "flag",
    "option",
    "cli",
    "server",
    "client",
    "route",
    "middleware",
    "logic",
    "algorithm",
];

const ASKING: &[&str] = &[
    "how",
    "where",
    "why",
    "what",
    "which",
    "when",
    "does",
    "explain",
    "find",
    "show",
    "fix",
    "implement",
    "add",
    "change",
    "refactor",
    "debug",
    "trace",
];

/// Whether a prompt asks about code (and is worth answering with code). Deliberately
/// conservative: a wrong "no" costs nothing, a wrong "yes" costs the user context.
pub fn is_code_question(prompt: &str) -> bool {
    let p = prompt.trim();
    if p.starts_with('/') || p.len() < 12 {
        return false;
    }
    let words: Vec<String> = p
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .map(|w| w.to_lowercase())
        .collect();
    if words.len() < 3 {
        return false;
    }
    // Code-looking tokens: snake_case, camelCase, paths with extensions, calls, `::`, backticks.
    let identifier = p.split_whitespace().any(|t| {
        let t = t.trim_matches(|c: char| !c.is_alphanumeric() && c != '_');
        (t.contains('_') && t.len() > 2)
            || (t.chars().next().is_some_and(|c| c.is_lowercase())
                && t.chars().skip(1).any(|c| c.is_uppercase()))
    });
    let syntax = p.contains('`')
        || p.contains("::")
        || p.contains("()")
        || p.split_whitespace().any(|t| {
            let t = t.trim_end_matches(['.', ',', '?', ':', ')']);
            t.contains('/')
                && t.rsplit_once('.')
                    .is_some_and(|(_, ext)| (1..=4).contains(&ext.len()))
        });
    let code_words = words
        .iter()
        .filter(|w| CODE_WORDS.contains(&w.as_str()))
        .count();
    let asking = words.iter().any(|w| ASKING.contains(&w.as_str())) || p.ends_with('?');
    identifier || syntax || (asking && code_words >= 1)
}

/// The hook's settings, from the environment.
#[derive(Debug, Clone)]
pub struct HookOptions {
    pub budget: u32,
    /// Give up (print nothing) after this long.
    pub timeout: Duration,
}

impl Default for HookOptions {
    fn default() -> Self {
        let num = |name: &str, default: u64| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(default)
        };
        HookOptions {
            budget: num("FITTOK_HOOK_BUDGET", 3000) as u32,
            timeout: Duration::from_millis(num("FITTOK_HOOK_TIMEOUT_MS", 8000)),
        }
    }
}

/// The hook's output for an input, or `None` to print nothing.
pub async fn respond(
    input: &HookInput,
    daemon: &crate::DaemonOptions,
    opts: &HookOptions,
) -> Option<String> {
    if !is_code_question(&input.prompt) {
        return None;
    }
    let cwd = input.cwd.as_deref().map(Path::new)?;
    // Only inside a repository: never index a home directory because a prompt came from it.
    let root = cwd
        .ancestors()
        .find(|d| d.join(".git").exists())?
        .to_path_buf();
    let work = async {
        let mut client = match crate::hello(&daemon.socket, "fittok-hook").await {
            Ok((c, _)) => c,
            Err(_) => {
                // Start it for the next prompt; this one goes without.
                let _ = crate::spawn_detached(daemon);
                return None;
            }
        };
        let reply = client
            .query(QueryRequest {
                repo: root.display().to_string(),
                question: input.prompt.clone(),
                budget: opts.budget,
                ..Default::default()
            })
            .await
            .ok()?
            .into_inner();
        if reply.node_ids.is_empty() {
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
    fn code_questions_and_chit_chat() {
        for yes in [
            "How does the retry logic work when a request times out?",
            "where is parse_config called from",
            "why does `Session.send` drop the auth header on redirects?",
            "fix the bug in src/walk.rs where symlinks are followed",
            "What calls handleRequest?",
        ] {
            assert!(is_code_question(yes), "{yes}");
        }
        for no in [
            "thanks!",
            "hi there",
            "ok, sounds good",
            "/clear",
            "What a lovely day it is today.",
            "please write me a poem about autumn leaves",
        ] {
            assert!(!is_code_question(no), "{no}");
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
