//! `fit`: Fitted Information Trees. `generate` splits a large Markdown document into a root
//! under a token threshold and linked subdocuments, losing nothing; `measure` sizes one.

use fittok_proto::v1::{FitAction, FitReply, FitRequest, FitVerdict};

use crate::{CliForm, Default, Kind, Param, Request};

/// Root token threshold when none is given (the engine's `FitOptions` agree; a daemon test
/// checks).
pub const SOFT_THRESHOLD: u32 = 3000;
/// No file above this many tokens, where lines allow.
pub const HARD_THRESHOLD: u32 = 5000;

/// The levels a tree can be fitted at.
pub const LEVELS: &[f32] = &[1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0];

const THRESHOLD: Kind = Kind::Int {
    min: 100,
    max: 10_000_000,
};

const PATH: Param = Param::new(
    "path",
    Kind::Text,
    "The Markdown document (an absolute path for agents), fitted in place; subdocuments go in the folder beside it.",
)
.cli(CliForm::Argument)
.required();
const SOFT: Param = Param::new("soft_threshold", THRESHOLD, "Root token threshold.")
    .defaults(&[(None, Default::Int(SOFT_THRESHOLD))]);
const HARD: Param = Param::new(
    "hard_threshold",
    THRESHOLD,
    "No file above this many tokens, where lines allow (a single longer line is reported).",
)
.defaults(&[(None, Default::Int(HARD_THRESHOLD))]);
const ESTIMATOR: Param = Param::new(
    "estimator",
    Kind::Choice(&["cl100k", "chars4"]),
    "`cl100k` (the real tokenizer) or `chars4` (characters / 4, for comparison with other tools).",
)
.defaults(&[(None, Default::Text("cl100k"))]);

/// `fit generate` (and the MCP tool `fit_markdown`): every setting of a tree.
pub struct Fit;

impl Request for Fit {
    const NAME: &'static str = "fit";
    const PARAMS: &'static [Param] = &[
        PATH,
        Param::new(
            "level",
            Kind::Float { min: 1.0, max: 4.0 },
            "1 structural, 1.5 code nearest the root, 2 lexical teasers, 2.5 fitted to `query`; 3 LLM summaries and placement, 3.5 fitted to `query`, 4 fitted to the task in `query` (3-4 need `llm_base_url`).",
        )
        .defaults(&[(None, Default::Float(1.0))]),
        SOFT,
        HARD,
        Param::new(
            "inline_threshold",
            Kind::Int { min: 0, max: 10_000_000 },
            "Sections up to this many tokens stay inline while the root stays under the soft threshold.",
        )
        .defaults(&[(None, Default::Int(600))]),
        Param::new(
            "inline_threshold_reduction_increment",
            Kind::Int { min: 1, max: 10_000_000 },
            "Step by which the inline threshold shrinks while the root is too big.",
        )
        .defaults(&[(None, Default::Int(100))]),
        Param::new(
            "trivial_extension_threshold",
            Kind::Int { min: 0, max: 10_000_000 },
            "A section whose split would save fewer tokens than this stays inline.",
        )
        .defaults(&[(None, Default::Int(25))]),
        Param::new(
            "min_segment_count",
            Kind::Int { min: 2, max: 1000 },
            "Fewest sections a heading level must give to split at it.",
        )
        .defaults(&[(None, Default::Int(3))]),
        Param::new(
            "inline_languages",
            Kind::List,
            "Code languages kept nearest the root at level 1.5 and above, in priority order.",
        )
        .defaults(&[(None, Default::List(&["python", "javascript", "typescript"]))]),
        ESTIMATOR,
        Param::new(
            "query",
            Kind::Text,
            "Levels 2.5, 3.5 and 4: the question or task the tree is fitted to.",
        ),
        Param::new("dry_run", Kind::Bool, "Plan only: print the files and sizes, write nothing."),
        Param::new(
            "llm_base_url",
            Kind::Text,
            "Levels 3-4: an OpenAI-compatible endpoint, e.g. http://localhost:8080/v1.",
        )
        .env("FITTOK_LLM_BASE_URL"),
        Param::new("llm_model", Kind::Text, "Levels 3-4: the endpoint's model.")
            .env("FITTOK_LLM_MODEL"),
    ];
}

/// `fit measure`: only what sizing a document reads (the thresholds and the estimator); the
/// service reads nothing else of a measure request, so its help offers nothing else.
pub struct FitMeasure;

impl Request for FitMeasure {
    const NAME: &'static str = "fit";
    const PARAMS: &'static [Param] = &[PATH, SOFT, HARD, ESTIMATOR];
}

crate::typed_args! {
    /// [`Fit`]'s values, typed.
    pub struct FitArgs {
        path: text,
        level: float,
        soft_threshold: int,
        hard_threshold: int,
        inline_threshold: int,
        inline_threshold_reduction_increment: int,
        trivial_extension_threshold: int,
        min_segment_count: int,
        inline_languages: list,
        estimator: text,
        query: text,
        dry_run: flag,
        llm_base_url: text,
        llm_model: text,
    }
}

/// The wire message for `a`; `path` (from [`FitArgs::path`]) must already be resolved.
pub fn request(action: FitAction, path: String, a: &FitArgs) -> FitRequest {
    FitRequest {
        path,
        action: action as i32,
        level: a.level,
        soft_threshold: a.soft_threshold,
        hard_threshold: a.hard_threshold,
        inline_threshold: a.inline_threshold,
        inline_threshold_reduction_increment: a.inline_threshold_reduction_increment,
        trivial_extension_threshold: a.trivial_extension_threshold,
        min_segment_count: a.min_segment_count,
        inline_languages: a.inline_languages.clone(),
        estimator: a.estimator.clone(),
        query: a.query.clone(),
        dry_run: a.dry_run,
        llm_base_url: a.llm_base_url.clone(),
        llm_model: a.llm_model.clone(),
    }
}

/// Exit status of `fit measure` for a verdict: 0 fits, 10 over the soft threshold, 11 over
/// the hard one.
pub fn measure_exit(verdict: FitVerdict) -> i32 {
    match verdict {
        FitVerdict::OverHard => 11,
        FitVerdict::OverSoft => 10,
        FitVerdict::Fits | FitVerdict::Unspecified => 0,
    }
}

fn verdict_text(v: FitVerdict) -> &'static str {
    match v {
        FitVerdict::Fits | FitVerdict::Unspecified => "fits",
        FitVerdict::OverSoft => "over soft",
        FitVerdict::OverHard => "over hard",
    }
}

/// `1760` → `1,760`.
fn thousands(n: u64) -> String {
    fittok_proto::thousands(n)
}

/// The reply as a user reads it (the CLI, `fittokd fit` and the MCP tool print this).
pub fn reply_text(action: FitAction, r: &FitReply) -> String {
    let mut out = String::new();
    if action == FitAction::Measure {
        if let Some(f) = r.files.first() {
            out.push_str(&format!(
                "{} tokens — {} ({})\n",
                thousands(f.tokens),
                verdict_text(r.verdict()),
                f.path
            ));
            if !f.over_hard_because.is_empty() {
                out.push_str(&format!("  {}\n", f.over_hard_because));
            }
        }
        return out;
    }
    if !r.unchanged.is_empty() {
        out.push_str(&format!("unchanged: {}\n", r.unchanged));
    }
    for f in &r.files {
        let because = if f.over_hard_because.is_empty() {
            String::new()
        } else {
            format!(" ({})", f.over_hard_because)
        };
        let mark = if f.tokens > u64::from(r.hard_threshold) {
            &format!("  OVER HARD{because}")
        } else if f.tokens > u64::from(r.soft_threshold) {
            "  over soft"
        } else {
            ""
        };
        out.push_str(&format!(
            "{:>8} tokens  {}{mark}\n",
            thousands(f.tokens),
            f.path
        ));
    }
    if !r.backup.is_empty() {
        out.push_str(&format!("original kept as {}\n", r.backup));
    }
    out
}
