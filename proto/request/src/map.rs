//! `map`: the codebase map as Markdown, or written as a Fitted Information Tree.

use fittok_proto::v1::MapRequest;

use crate::{CliForm, Default, Kind, Param, Request};

pub struct Map;

impl Request for Map {
    const NAME: &'static str = "map";
    const PARAMS: &'static [Param] = &[
        Param::new("repo", Kind::Text, "The repository (default: the current one).")
            .cli(CliForm::Argument)
            .no_mcp(),
        Param::new(
            "fit_dir",
            Kind::Text,
            "Write the map there as a Fitted Information Tree (`DIR/codebase-map.md` + `DIR/codebase-map/`) instead of printing it.",
        )
        .aliases(&["fit"])
        .no_mcp(),
        Param::new(
            "soft_threshold",
            Kind::Int { min: 100, max: 10_000_000 },
            "Root token threshold of the tree.",
        )
        .defaults(&[(None, Default::Int(crate::fit::SOFT_THRESHOLD))])
        .no_mcp(),
        Param::new(
            "hard_threshold",
            Kind::Int { min: 100, max: 10_000_000 },
            "No file of the tree above this many tokens, where lines allow.",
        )
        .defaults(&[(None, Default::Int(crate::fit::HARD_THRESHOLD))])
        .no_mcp(),
    ];
}

crate::typed_args! {
    /// [`Map`]'s values, typed.
    pub struct MapArgs {
        repo: opt_text,
        fit_dir: opt_text,
        soft_threshold: int,
        hard_threshold: int,
    }
}

/// The wire message; `fit_dir` (from [`MapArgs::fit_dir`]) must already be absolute.
pub fn request(repo: String, fit_dir: String, a: &MapArgs) -> MapRequest {
    MapRequest {
        repo,
        fit_dir,
        soft_threshold: a.soft_threshold,
        hard_threshold: a.hard_threshold,
    }
}
