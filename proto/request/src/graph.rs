//! `graph`: the code graph as one self-contained HTML page.

use fittok_proto::v1::GraphRequest;

use crate::{CliForm, Kind, Param, Request};

pub struct Graph;

impl Request for Graph {
    const NAME: &'static str = "graph";
    const PARAMS: &'static [Param] = &[
        Param::new(
            "repo",
            Kind::Text,
            "The repository (default: the current one).",
        )
        .cli(CliForm::Argument)
        .no_mcp(),
        Param::new(
            "query",
            Kind::Text,
            "Highlight the nodes the answer to this question would show.",
        )
        .no_mcp(),
    ];
}

crate::typed_args! {
    /// [`Graph`]'s values, typed.
    pub struct GraphArgs {
        repo: opt_text,
        query: text,
    }
}

pub fn request(repo: String, a: &GraphArgs) -> GraphRequest {
    GraphRequest {
        repo,
        query: a.query.clone(),
    }
}
