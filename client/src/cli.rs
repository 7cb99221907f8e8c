//! Command-line flags that both binaries take, defined once and mapped one to one onto the
//! request messages of `fittok.proto`; and how their replies print.

use std::path::PathBuf;

use crate::v1::{FitReply, FitRequest};
use fittok_proto::thousands;

/// `fit generate` / `fit measure` flags (the `FitRequest` message).
#[derive(Debug, Clone, clap::Args)]
pub struct FitArgs {
    /// The Markdown document (fitted in place; subdocuments go in the folder beside it).
    pub path: PathBuf,
    /// 1 structural, 1.5 preferred code nearest the root, 2 lexical teasers, 2.5 query-fitted.
    #[arg(long, default_value_t = 1.0)]
    pub level: f32,
    #[arg(long, default_value_t = 3000)]
    pub soft_threshold: u32,
    #[arg(long, default_value_t = 5000)]
    pub hard_threshold: u32,
    #[arg(long, default_value_t = 600)]
    pub inline_threshold: u32,
    #[arg(long, default_value_t = 100)]
    pub inline_threshold_reduction_increment: u32,
    #[arg(long, default_value_t = 25)]
    pub trivial_extension_threshold: u32,
    /// Fewest sections a heading level must give to split at it (minimum 2).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..))]
    pub min_segment_count: u32,
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "python,javascript,typescript"
    )]
    pub inline_languages: Vec<String>,
    /// `cl100k` (the real tokenizer) or `chars4` (the original's chars/4, for comparison).
    #[arg(long, default_value = "cl100k", value_parser = ["cl100k", "chars4"])]
    pub estimator: String,
    /// Level 2.5: sections relevant to this question stay nearest the root.
    #[arg(long)]
    pub query: Option<String>,
    /// Print the planned files and sizes; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Levels 3-4 (3 LLM summaries and placement, 3.5 fitted to --query, 4 fitted to the
    /// task in --query): an OpenAI-compatible endpoint, e.g. http://localhost:8080/v1.
    #[arg(long, env = "FITTOK_LLM_BASE_URL")]
    pub llm_base_url: Option<String>,
    #[arg(long, env = "FITTOK_LLM_MODEL")]
    pub llm_model: Option<String>,
}

impl FitArgs {
    pub fn request(&self, action: &str) -> Result<FitRequest, String> {
        let path = self
            .path
            .canonicalize()
            .map_err(|_| format!("{} does not exist", self.path.display()))?;
        Ok(FitRequest {
            path: path.display().to_string(),
            action: action.into(),
            level: self.level,
            soft_threshold: self.soft_threshold,
            hard_threshold: self.hard_threshold,
            inline_threshold: self.inline_threshold,
            inline_threshold_reduction_increment: self.inline_threshold_reduction_increment,
            trivial_extension_threshold: self.trivial_extension_threshold,
            min_segment_count: self.min_segment_count,
            inline_languages: self.inline_languages.clone(),
            estimator: self.estimator.clone(),
            query: self.query.clone().unwrap_or_default(),
            dry_run: self.dry_run,
            llm_base_url: self.llm_base_url.clone().unwrap_or_default(),
            llm_model: self.llm_model.clone().unwrap_or_default(),
        })
    }
}

#[derive(Debug, Clone, clap::Subcommand)]
pub enum FitAction {
    /// Fit a document in place (the original is kept once as `<name>.unfit.md`).
    Generate(FitArgs),
    /// Size of a document against the thresholds. Exit status: 0 fits, 10 over the soft
    /// threshold, 11 over the hard one.
    Measure(FitArgs),
}

impl FitAction {
    pub fn request(&self) -> Result<FitRequest, String> {
        match self {
            FitAction::Generate(a) => a.request("generate"),
            FitAction::Measure(a) => a.request("measure"),
        }
    }
}

/// Exit status of `fit measure` for a verdict.
pub fn measure_exit(verdict: &str) -> i32 {
    match verdict {
        "over hard" => 11,
        "over soft" => 10,
        _ => 0,
    }
}

/// The reply as a user reads it.
pub fn fit_text(action: &str, r: &FitReply) -> String {
    let mut out = String::new();
    if action == "measure" {
        if let Some(f) = r.files.first() {
            out.push_str(&format!(
                "{} tokens — {} ({})\n",
                thousands(f.tokens),
                r.verdict,
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
