//! `fittok-mcp`: an MCP stdio server whose tools forward to `fittokd`.
//!
//! It answers `initialize` and `tools/list` at once, whatever the daemon's state: the daemon
//! is reached (and started if needed) in the background and on the first tool call. Every
//! failure becomes a tool error an agent can act on; the server itself never goes down for a
//! bad request or a dead daemon.

mod guard;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use fittok_connect::backend::{Backend, StderrTo};
use fittok_connect::v1::FitAction;
use fittok_connect::{ClientError, DaemonOptions};
use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{
    ErrorData, Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router,
};

mod args;
mod limits;

use args::Args;
use fittok_request::Request;
use fittok_request::expand::Expand;
use fittok_request::fit::Fit;
use fittok_request::navigate::Navigate;
use fittok_request::query::Query;

struct State {
    daemon: DaemonOptions,
    /// FITTOK_NO_DAEMON: each request runs in a `fittokd call` of its own, nothing resident.
    no_daemon: bool,
    backend: tokio::sync::Mutex<Option<Backend>>,
    /// Node ids returned per repository in this session, with the version shown.
    seen: std::sync::Mutex<HashMap<String, HashMap<String, u64>>>,
    /// FITTOK_MAX_BUDGET of this shim's environment (0 = none): an agent's client may cap
    /// what its agent asks for, whatever the daemon allows.
    max_budget: u32,
    /// The variables tool parameters fall back to (the LLM endpoint of FIT levels 3–4).
    env: args::Env,
    /// Bytes and lines per token of this session's answers, to size them for the client.
    per_token: std::sync::Mutex<limits::PerToken>,
}

#[derive(Clone)]
struct Shim {
    tool_router: ToolRouter<Shim>,
    state: Arc<State>,
}

fn tool_error(message: impl Into<String>) -> Result<CallToolResult, ErrorData> {
    Ok(CallToolResult::error(vec![ContentBlock::text(
        message.into(),
    )]))
}

impl Shim {
    fn new(daemon: DaemonOptions, no_daemon: bool, max_budget: u32, env: args::Env) -> Shim {
        Shim {
            tool_router: Self::tool_router(),
            state: Arc::new(State {
                daemon,
                no_daemon,
                backend: tokio::sync::Mutex::new(None),
                seen: Default::default(),
                max_budget,
                env,
                per_token: Default::default(),
            }),
        }
    }

    /// Where requests run: a connected daemon (started or reconnected as needed), or with
    /// FITTOK_NO_DAEMON this process's `fittokd call`s.
    async fn backend(&self, fresh: bool) -> Result<Backend, String> {
        let mut slot = self.state.backend.lock().await;
        if !fresh && let Some(b) = slot.as_ref() {
            return Ok(b.clone());
        }
        match Backend::new(&self.state.daemon, self.state.no_daemon, StderrTo::Capture).await {
            Ok(b) => {
                *slot = Some(b.clone());
                Ok(b)
            }
            Err(e) => Err(format!(
                "fittok daemon unavailable: {e}. Check `fittok daemon logs`, or run `fittok status`."
            )),
        }
    }

    /// The repository a call is about: the argument (must exist), else the client's first
    /// root, else the working directory's repository. Roots are deprecated by SEP-2577 but
    /// current clients (Claude Code, VS Code) still send them, and they name the workspace.
    #[allow(deprecated)]
    async fn repo(&self, arg: Option<&str>, peer: &Peer<RoleServer>) -> Result<PathBuf, String> {
        if let Some(p) = arg.filter(|p| !p.trim().is_empty()) {
            let path = PathBuf::from(p);
            if !path.is_absolute() {
                return Err(format!("repo must be an absolute path, got {p:?}"));
            }
            return path.canonicalize().map_err(|_| {
                format!(
                    "repository path {p} does not exist; pass the absolute path of a repository"
                )
            });
        }
        let supports_roots = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.roots.is_some());
        if supports_roots
            && let Ok(Ok(roots)) =
                tokio::time::timeout(Duration::from_secs(2), peer.list_roots()).await
            && let Some(path) = roots
                .roots
                .iter()
                .find_map(|r| r.uri.strip_prefix("file://"))
                .map(PathBuf::from)
                .filter(|p| p.is_dir())
        {
            return Ok(path);
        }
        let cwd = std::env::current_dir()
            .map_err(|e| format!("no repo given and the working directory is unreadable: {e}"))?;
        Ok(fittok_connect::repo_root(&cwd))
    }

    /// Runs an RPC, reconnecting once if the daemon went away.
    async fn call<T, F, Fut>(&self, f: F) -> Result<T, String>
    where
        F: Fn(Backend) -> Fut,
        Fut: std::future::Future<Output = Result<T, ClientError>>,
    {
        let backend = self.backend(false).await?;
        match f(backend).await {
            Ok(r) => Ok(r),
            Err(ClientError::Rpc(s))
                if s.code() == tonic::Code::Unavailable || s.code() == tonic::Code::Unknown =>
            {
                let backend = self.backend(true).await?;
                f(backend).await.map_err(|e| message(&e))
            }
            Err(e) => Err(message(&e)),
        }
    }
}

/// What an agent reads of a failed call: the daemon's message, or an in-process run's.
fn message(e: &ClientError) -> String {
    match e {
        ClientError::Rpc(s) => s.message().to_string(),
        ClientError::InProcess { code, message } if message.is_empty() => {
            format!("fittokd call failed (exit status {code})")
        }
        other => other.to_string(),
    }
}

#[tool_router]
impl Shim {
    #[tool(
        description = "Source code that answers a question about a codebase: the relevant functions, classes and methods with real line numbers, a map of the files they live in, and pointers (→ id) to related code that did not fit, within a token budget. The code shown is current source: do not re-read those files. Ask one focused question per facet; for a multi-part question make one call per part. Code already returned in this session is not repeated but named (skip_seen=false repeats it). Follow pointers with code_expand."
    )]
    async fn code_context(
        &self,
        Parameters(args): Parameters<Args<Query>>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let values = match args.values(&self.state.env) {
            Ok(v) => fittok_request::query::QueryArgs::from_values(&v),
            Err(e) => return tool_error(e),
        };
        if values.question.trim().is_empty() {
            return tool_error("question is empty: ask about the code in words");
        }
        let repo = match self.repo(values.repo.as_deref(), &peer).await {
            Ok(r) => r,
            Err(e) => return tool_error(e),
        };
        let repo_key = repo.display().to_string();
        let exclude: Vec<(String, u64)> = if values.skip_seen {
            self.state
                .seen
                .lock()
                .map(|s| {
                    s.get(&repo_key)
                        .map(|v| {
                            v.iter()
                                .map(|(id, version)| (id.clone(), *version))
                                .collect()
                        })
                        .unwrap_or_default()
                })
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        let mut req = fittok_request::query::request(repo_key.clone(), &values);
        req.budget = fittok_request::cap_budget(req.budget, self.state.max_budget);
        (req.exclude, req.exclude_versions) = exclude.into_iter().unzip();
        // Sized to what this client keeps of a result, when that is known: a smaller budget
        // until the answer fits, never an answer cut by the client.
        let limit = peer.peer_info().and_then(|info| limits::of(&info));
        let per_token = self.state.per_token.lock().map(|p| *p).unwrap_or_default();
        if let Some(l) = limit {
            req.budget = l.first_budget(req.budget, per_token);
        }
        let mut reply;
        let mut attempts = 0;
        loop {
            reply = match self
                .call(|mut b| {
                    let req = req.clone();
                    async move { b.query(req).await }
                })
                .await
            {
                Ok(r) => r,
                Err(e) => return tool_error(e),
            };
            if let Ok(mut p) = self.state.per_token.lock() {
                p.learn(&reply.text, reply.tokens);
            }
            attempts += 1;
            match limit {
                Some(l)
                    if !l.fits(&reply.text)
                        && attempts < 4
                        && req.budget > fittok_proto::MIN_BUDGET =>
                {
                    req.budget = l.smaller_budget(req.budget, &reply.text);
                }
                _ => break,
            }
        }
        if let Some(l) = limit
            && !l.fits(&reply.text)
        {
            reply.text = limits::cut(&reply.text, l);
        }
        if let Ok(mut seen) = self.state.seen.lock() {
            let versions = reply
                .node_versions
                .iter()
                .copied()
                .chain(std::iter::repeat(0));
            seen.entry(repo_key)
                .or_default()
                .extend(reply.node_ids.into_iter().zip(versions));
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(
            reply.text,
        )]))
    }

    #[tool(
        description = "Who calls a function or method (callers), what it calls (callees), every use of it (references: calls, type uses, inheritance), or what a change to it can reach (impact): each site's code with the referring lines marked and real line numbers, nearest first, within a token budget; says how each edge was resolved and which references could not be. target: a name (`parse_url`, `Session.send`), an id (`path#Qualified.name`) or `path:line`."
    )]
    async fn code_navigate(
        &self,
        Parameters(args): Parameters<Args<Navigate>>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let values = match args.values(&self.state.env) {
            Ok(v) => fittok_request::navigate::NavigateArgs::from_values(&v),
            Err(e) => return tool_error(e),
        };
        if values.target.trim().is_empty() {
            return tool_error("target is empty: name a function, method or type, or path:line");
        }
        let repo = match self.repo(values.repo.as_deref(), &peer).await {
            Ok(r) => r,
            Err(e) => return tool_error(e),
        };
        let mut req = fittok_request::navigate::request(repo.display().to_string(), &values);
        req.budget = fittok_request::cap_budget(req.budget, self.state.max_budget);
        let limit = peer.peer_info().and_then(|info| limits::of(&info));
        let per_token = self.state.per_token.lock().map(|p| *p).unwrap_or_default();
        if let Some(l) = limit {
            req.budget = l.first_budget(req.budget, per_token);
        }
        let mut reply = match self
            .call(|mut b| {
                let req = req.clone();
                async move { b.navigate(req).await }
            })
            .await
        {
            Ok(r) => r,
            Err(e) => return tool_error(e),
        };
        if let Some(l) = limit
            && !l.fits(&reply.text)
        {
            reply.text = limits::cut(&reply.text, l);
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(
            reply.text,
        )]))
    }

    #[tool(
        description = "Whole source of ids from an earlier code_context answer: `path#Qualified.name`, `path:10-40` (a line range) or `path` (a file's outline), e.g. its → pointers."
    )]
    async fn code_expand(
        &self,
        Parameters(args): Parameters<Args<Expand>>,
        peer: Peer<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let values = match args.values(&self.state.env) {
            Ok(v) => fittok_request::expand::ExpandArgs::from_values(&v),
            Err(e) => return tool_error(e),
        };
        if values.ids.is_empty() {
            return tool_error("ids is empty: pass ids from an answer, e.g. src/app.py#App.run");
        }
        let repo = match self.repo(values.repo.as_deref(), &peer).await {
            Ok(r) => r,
            Err(e) => return tool_error(e),
        };
        let req = fittok_request::expand::request(repo.display().to_string(), &values);
        match self
            .call(|mut b| {
                let req = req.clone();
                async move { b.expand(req).await }
            })
            .await
        {
            Ok(r) => Ok(CallToolResult::success(vec![ContentBlock::text(r.text)])),
            Err(e) => tool_error(e),
        }
    }

    #[tool(
        description = "Split a large Markdown document into a Fitted Information Tree in place: a root under the token threshold linking to subdocuments (→ [doc/x.md](doc/x.md) (~N tokens)), losing nothing; the original is kept as doc.unfit.md. Read the root, then only the subdocuments the task needs."
    )]
    async fn fit_markdown(
        &self,
        Parameters(args): Parameters<Args<Fit>>,
    ) -> Result<CallToolResult, ErrorData> {
        let values = match args.values(&self.state.env) {
            Ok(v) => fittok_request::fit::FitArgs::from_values(&v),
            Err(e) => return tool_error(e),
        };
        let path_arg = values.path.clone();
        let path = PathBuf::from(&path_arg);
        if !path.is_absolute() || !path.is_file() {
            return tool_error(format!(
                "{path_arg} is not an existing absolute path to a Markdown file"
            ));
        }
        let req = fittok_request::fit::request(FitAction::Generate, path_arg, &values);
        match self
            .call(|mut b| {
                let req = req.clone();
                async move { b.fit(req).await }
            })
            .await
        {
            Ok(r) => Ok(CallToolResult::success(vec![ContentBlock::text(
                fittok_request::fit::reply_text(FitAction::Generate, &r),
            )])),
            Err(e) => tool_error(e),
        }
    }

    #[tool(
        description = "fittok's state: resident repositories with node counts, index freshness and semantic-search coverage."
    )]
    async fn fittok_status(&self) -> Result<CallToolResult, ErrorData> {
        match self.call(|mut b| async move { b.status().await }).await {
            Ok(None) => Ok(CallToolResult::success(vec![ContentBlock::text(
                "no daemon (FITTOK_NO_DAEMON): each request runs in a process of its own and \
                 nothing stays resident; repositories are indexed per call from the cache\n",
            )])),
            Ok(Some(s)) => {
                let mut text = format!(
                    "fittokd {} · pid {} · up {} s · RSS {} MB\n",
                    s.version,
                    s.pid,
                    s.uptime_ms / 1000,
                    s.rss_bytes >> 20
                );
                if s.repos.is_empty() {
                    text.push_str("no repository indexed yet: code_context indexes on first use\n");
                }
                for r in s.repos {
                    text.push_str(&format!(
                        "{} · {} · {} files · {} nodes · semantic {:.0}% · {}\n",
                        r.path,
                        r.state,
                        r.files,
                        r.nodes,
                        r.semantic_coverage * 100.0,
                        r.freshness
                    ));
                }
                Ok(CallToolResult::success(vec![ContentBlock::text(text)]))
            }
            Err(e) => tool_error(e),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for Shim {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("fittok", fittok_proto::VERSION)
                    .with_title("fittok: code context for questions about a repository"),
            )
            .with_instructions(
                "Use code_context to learn how something works in the codebase before opening files: it returns the exact source that answers, within a token budget. One call per facet of a question; follow → pointers with code_expand. For who calls X, what X calls, where X is used, or what a change to X breaks, use code_navigate.",
            )
    }
}

/// Errors are one line (`fittok-mcp: connection closed: initialize request`), with or without
/// RUST_BACKTRACE.
fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fittok-mcp: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fittok-mcp: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> anyhow::Result<()> {
    // This process's configuration, read once: where the daemon is, and the operator's cap.
    let env = |k: &str| std::env::var(k).ok();
    // A malformed cap is refused, as the daemon refuses it: no cap is not what was asked.
    let max_budget = match env("FITTOK_MAX_BUDGET").filter(|v| !v.trim().is_empty()) {
        None => 0,
        Some(v) => v.trim().parse().map_err(|_| {
            anyhow::anyhow!("FITTOK_MAX_BUDGET={v:?}: expected a number of tokens (0 = no cap)")
        })?,
    };
    let params = [Query::PARAMS, Navigate::PARAMS, Expand::PARAMS, Fit::PARAMS];
    // Read as the CLI's flag reads it (clap's boolish values); anything else is refused.
    let no_daemon = match env("FITTOK_NO_DAEMON").filter(|v| !v.trim().is_empty()) {
        None => false,
        Some(v) => fittok_connect::backend::boolish(&v).ok_or_else(|| {
            anyhow::anyhow!("FITTOK_NO_DAEMON={v:?}: expected 1/0, true/false, yes/no or on/off")
        })?,
    };
    let shim = Shim::new(
        DaemonOptions::from_vars("fittok-mcp", env),
        no_daemon,
        max_budget,
        args::env_of(&params, env),
    );
    // Warm the daemon in the background: `initialize` must not wait for it.
    let warm = shim.clone();
    tokio::spawn(async move {
        let _ = warm.backend(false).await;
    });
    // The server speaks through in-memory pipes; the guard sits between them and stdio, so
    // that malformed requests are answered rather than dropped.
    let (server_in, guard_feed) = tokio::io::duplex(1 << 20);
    let (guard_drain, server_out) = tokio::io::duplex(1 << 20);
    let guard = tokio::spawn(guard::run(
        tokio::io::stdin(),
        tokio::io::stdout(),
        guard_feed,
        guard_drain,
    ));
    let service = shim.serve((server_in, server_out)).await?;
    service.waiting().await?;
    let _ = guard.await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use fittok_request::Request;
    /// What agents see is what the definitions say: each tool's properties are exactly the
    /// request's parameters offered to agents.
    #[test]
    fn tool_schemas_are_derived_from_the_definitions() {
        let tools = super::Shim::tool_router().list_all();
        for (name, params) in [
            ("code_context", super::Query::PARAMS),
            ("code_navigate", super::Navigate::PARAMS),
            ("code_expand", super::Expand::PARAMS),
            ("fit_markdown", super::Fit::PARAMS),
        ] {
            let tool = tools.iter().find(|t| t.name == name).expect(name);
            let mut got: Vec<String> = tool.input_schema["properties"]
                .as_object()
                .expect("properties")
                .keys()
                .cloned()
                .collect();
            got.sort();
            let mut want: Vec<String> = params
                .iter()
                .filter(|p| p.mcp)
                .map(|p| p.name.to_string())
                .collect();
            want.sort();
            assert_eq!(got, want, "{name}");
        }
    }
}
