//! `index`: make a repository resident and embed it completely.

use fittok_proto::v1::IndexRequest;

use crate::{CliForm, Default, Kind, Param, Request};

pub struct Index;

impl Request for Index {
    const NAME: &'static str = "index";
    const PARAMS: &'static [Param] = &[
        Param::new("repo", Kind::Text, "The repository (default: the current one).")
            .cli(CliForm::Argument)
            .no_mcp(),
        Param::new(
            "wait_semantic",
            Kind::Bool,
            "Wait until every node is embedded; without it, return once lexical ranking is ready (embedding goes on in the daemon).",
        )
        .defaults(&[(None, Default::Bool(true))])
        .off_doc("Return once lexical ranking is ready; embedding goes on in the daemon.")
        .aliases(&["no-wait"])
        .no_mcp(),
    ];
}

crate::typed_args! {
    /// [`Index`]'s values, typed.
    pub struct IndexArgs {
        repo: opt_text,
        wait_semantic: flag,
    }
}

pub fn request(repo: String, a: &IndexArgs) -> IndexRequest {
    IndexRequest {
        repo,
        wait_semantic: a.wait_semantic,
    }
}
