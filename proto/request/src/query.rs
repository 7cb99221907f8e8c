//! `query`: the code that answers a question about a repository, within a token budget.

use fittok_proto::v1::QueryRequest;

use crate::{CliForm, Default, Kind, Param, Request, Surface, WORKSPACE_REPO};

/// Budget an agent gets when it names none: an answer that leaves most of its context free.
pub const MCP_BUDGET: u32 = 4000;
/// Budget of the context the prompt hook injects: smaller, since nobody asked for it.
pub const HOOK_BUDGET: u32 = 3000;

pub struct Query;

impl Request for Query {
    const NAME: &'static str = "query";
    const PARAMS: &'static [Param] = &[
        WORKSPACE_REPO,
        Param::new(
            "question",
            Kind::Text,
            "One question about the code, in words (\"how are retries scheduled after a timeout?\").",
        )
        .cli(CliForm::Argument)
        .required(),
        Param::new(
            "budget",
            Kind::Budget,
            "Token budget for the whole answer, at least 200; 0 = no cap (the relevance cliff decides).",
        )
        .defaults(&[
            (Some(Surface::Mcp), Default::Int(MCP_BUDGET)),
            (Some(Surface::Hook), Default::Int(HOOK_BUDGET)),
            (None, Default::Int(0)),
        ]),
        Param::new("o200k", Kind::Bool, "Count tokens with o200k instead of cl100k.").no_mcp(),
        Param::new(
            "explain",
            Kind::Int { min: 0, max: 10_000 },
            "With --json, include the top N of the ranking with each signal's rank.",
        )
        .no_mcp(),
        Param::new("json", Kind::Bool, "Print the answer as JSON.").no_mcp(),
        Param::new(
            "show_savings",
            Kind::Bool,
            "Append the tokens saved against reading whole files.",
        )
        .env("FITTOK_SHOW_SAVINGS")
        .no_mcp(),
        // Ids an MCP session has already been shown (see `skip_seen`).
        Param::new("exclude", Kind::List, "Node ids to leave out of the answer.")
            .cli(CliForm::Absent)
            .no_mcp(),
        Param::new(
            "code",
            Kind::Bool,
            "Print the code slice only, even when an LLM key is set.",
        )
        .local()
        .no_mcp(),
        Param::new(
            "model",
            Kind::Text,
            "The model that writes the answer (default: claude-haiku-4-5 with ANTHROPIC_API_KEY, gpt-4o-mini with OPENAI_API_KEY, FITTOK_LLM_MODEL with FITTOK_LLM_BASE_URL).",
        )
        .local()
        .no_mcp(),
        Param::new(
            "skip_seen",
            Kind::Bool,
            "Leave out code already returned in this session (default true); set false to get it again.",
        )
        .defaults(&[(None, Default::Bool(true))])
        .local()
        .cli(CliForm::Absent),
    ];
}

crate::typed_args! {
    /// [`Query`]'s values, typed.
    pub struct QueryArgs {
        repo: opt_text,
        question: text,
        budget: int,
        o200k: flag,
        explain: int,
        json: flag,
        show_savings: flag,
        exclude: list,
        code: flag,
        model: opt_text,
        skip_seen: flag,
    }
}

/// The wire message for `a` about the (resolved, absolute) repository `repo`. An operator's
/// cap applies where it is configured ([`crate::cap_budget`]).
pub fn request(repo: String, a: &QueryArgs) -> QueryRequest {
    QueryRequest {
        repo,
        question: a.question.clone(),
        budget: a.budget,
        o200k: a.o200k,
        explain: a.explain,
        json: a.json,
        show_savings: a.show_savings,
        exclude: a.exclude.clone(),
        exclude_versions: Vec::new(),
    }
}
