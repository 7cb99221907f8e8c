//! `expand`: the whole source of ids from an answer.

use fittok_proto::v1::ExpandRequest;

use crate::{CliForm, Kind, Param, Request};

pub struct Expand;

impl Request for Expand {
    const NAME: &'static str = "expand";
    const PARAMS: &'static [Param] = &[
        Param::new(
            "repo",
            Kind::Text,
            "Absolute path of the repository (default: the one containing the current directory, or the client's workspace root).",
        ),
        Param::new(
            "ids",
            Kind::List,
            "Ids from an earlier answer: `path#Qualified.name`, `path:10-40` (a line range) or `path` (a file's outline).",
        )
        .cli(CliForm::Argument)
        .required(),
    ];
}

crate::typed_args! {
    /// [`Expand`]'s values, typed.
    pub struct ExpandArgs {
        repo: opt_text,
        ids: list,
    }
}

pub fn request(repo: String, a: &ExpandArgs) -> ExpandRequest {
    ExpandRequest {
        repo,
        ids: a.ids.clone(),
    }
}
