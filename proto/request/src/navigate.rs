//! `navigate`: callers, callees, uses or impact of one definition, with their code.

use fittok_proto::v1::NavigateRequest;

use crate::{CliForm, Default, Kind, Param, Request, Surface, WORKSPACE_REPO};

pub const DIRECTIONS: &[&str] = &["callers", "callees", "references", "impact"];

pub struct Navigate;

impl Request for Navigate {
    const NAME: &'static str = "navigate";
    const PARAMS: &'static [Param] = &[
        WORKSPACE_REPO,
        Param::new(
            "target",
            Kind::Text,
            "The definition: a name (`parse_url`, `Session.send`, `Router::route`), an id from an answer (`path#Qualified.name`) or `path:line`.",
        )
        .cli(CliForm::Argument)
        .required(),
        Param::new(
            "direction",
            Kind::Choice(DIRECTIONS),
            "`callers` (who calls it), `callees` (what it calls), `references` (every use: calls, type uses, inheritance) or `impact` (everything that reaches it through calls and uses, nearest first).",
        )
        .defaults(&[(None, Default::Text("callers"))]),
        Param::new(
            "depth",
            Kind::Int { min: 1, max: 6 },
            "Steps an impact walk takes.",
        )
        .defaults(&[(None, Default::Int(3))]),
        Param::new(
            "budget",
            Kind::Budget,
            "Token budget for the whole answer, at least 200; 0 = no cap.",
        )
        .defaults(&[
            (Some(Surface::Mcp), Default::Int(crate::query::MCP_BUDGET)),
            (None, Default::Int(0)),
        ]),
        Param::new("o200k", Kind::Bool, "Count tokens with o200k instead of cl100k.").no_mcp(),
        Param::new("json", Kind::Bool, "Print the answer as JSON.").no_mcp(),
    ];
}

crate::typed_args! {
    /// [`Navigate`]'s values, typed.
    pub struct NavigateArgs {
        repo: opt_text,
        target: text,
        direction: text,
        depth: int,
        budget: int,
        o200k: flag,
        json: flag,
    }
}

/// The wire message for `a` about the (resolved, absolute) repository `repo`.
pub fn request(repo: String, a: &NavigateArgs) -> NavigateRequest {
    NavigateRequest {
        repo,
        target: a.target.clone(),
        direction: a.direction.clone(),
        depth: a.depth,
        budget: a.budget,
        o200k: a.o200k,
        json: a.json,
    }
}
