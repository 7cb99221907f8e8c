//! The Fit request: wire message ↔ `crate::fit`. Used by the RPC and by `fittokd fit`.

use fittok_proto::v1::{FitFileInfo, FitReply, FitRequest, MapRequest};

use crate::fit::{self, Advisor, Estimator, FitOptions, Verdict};
use fittok_client::llm::Provider;

/// Levels 3–4: a model behind an OpenAI-compatible endpoint, asked synchronously from the
/// blocking pool (or from `fittokd fit`, which has no runtime of its own).
struct LlmAdvisor {
    provider: Provider,
    runtime: Option<tokio::runtime::Runtime>,
}

impl LlmAdvisor {
    fn new(base_url: &str, model: &str) -> Result<LlmAdvisor, String> {
        let key = std::env::var("FITTOK_LLM_API_KEY")
            .or_else(|_| std::env::var("OPENAI_API_KEY"))
            .ok()
            .filter(|k| !k.trim().is_empty());
        let runtime = match tokio::runtime::Handle::try_current() {
            Ok(_) => None,
            Err(_) => Some(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?,
            ),
        };
        let model = if model.is_empty() { "default" } else { model };
        Ok(LlmAdvisor {
            provider: Provider::openai_compatible(base_url, model, key),
            runtime,
        })
    }

    fn ask(&self, system: &str, user: &str) -> Result<String, String> {
        let fut = self.provider.chat(system, user);
        let reply = match &self.runtime {
            Some(rt) => rt.block_on(fut),
            None => tokio::runtime::Handle::current().block_on(fut),
        };
        reply.map_err(|e| e.to_string())
    }
}

impl Advisor for LlmAdvisor {
    fn summary(&self, section: &str) -> Result<String, String> {
        let text: String = section.chars().take(12_000).collect();
        self.ask(
            "You summarise one section of a Markdown document for a reader deciding whether to open it. Reply with one or two plain sentences saying what the section contains; no preamble, no Markdown.",
            &text,
        )
    }

    fn importance(&self, sections: &[String], task: Option<&str>) -> Result<Vec<usize>, String> {
        let list: String = sections
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{i}. {s}\n"))
            .collect();
        let goal = match task {
            Some(t) => format!("for this task: {t}"),
            None => "for a reader new to the document".to_string(),
        };
        let reply = self.ask(
            "You rank the sections of a Markdown document by how important they are. Reply with a JSON array of section numbers, most important first, and nothing else.",
            &format!("Rank these sections {goal}.\n\n{list}"),
        )?;
        let start = reply
            .find('[')
            .ok_or_else(|| format!("no ranking in the reply: {reply:?}"))?;
        let end = reply
            .rfind(']')
            .ok_or_else(|| format!("no ranking in the reply: {reply:?}"))?;
        let order: Vec<usize> = serde_json::from_str::<Vec<serde_json::Value>>(&reply[start..=end])
            .map_err(|e| format!("unreadable ranking {reply:?}: {e}"))?
            .iter()
            .filter_map(|v| v.as_u64().map(|n| n as usize))
            .filter(|&i| i < sections.len())
            .collect();
        Ok(order)
    }
}

/// Options from a request; zero fields take the defaults.
pub fn options(req: &FitRequest) -> Result<FitOptions, String> {
    let d = FitOptions::default();
    let or = |v: u32, default: usize| if v == 0 { default } else { v as usize };
    let estimator = match req.estimator.as_str() {
        "" | "cl100k" => Estimator::Cl100k,
        "chars4" => Estimator::Chars4,
        other => return Err(format!("unknown estimator {other:?}: use cl100k or chars4")),
    };
    Ok(FitOptions {
        level: if req.level == 0.0 { 1.0 } else { req.level },
        soft: or(req.soft_threshold, d.soft),
        hard: or(req.hard_threshold, d.hard),
        inline_threshold: or(req.inline_threshold, d.inline_threshold),
        inline_reduction: or(req.inline_threshold_reduction_increment, d.inline_reduction),
        trivial_extension: or(req.trivial_extension_threshold, d.trivial_extension),
        min_segments: or(req.min_segment_count, d.min_segments).max(2),
        inline_languages: if req.inline_languages.is_empty() {
            d.inline_languages
        } else {
            req.inline_languages
                .iter()
                .map(|l| l.to_lowercase())
                .collect()
        },
        estimator,
        query: (!req.query.is_empty()).then(|| req.query.clone()),
    })
}

/// Runs a fit request.
pub fn run(req: &FitRequest) -> Result<FitReply, String> {
    let opts = options(req)?;
    let path = std::path::Path::new(&req.path);
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut reply = FitReply {
        soft_threshold: opts.soft as u32,
        hard_threshold: opts.hard as u32,
        ..FitReply::default()
    };
    match req.action.as_str() {
        "measure" => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
            let tokens = opts.estimator.count(&text);
            reply.verdict = match fit::verdict(tokens, &opts) {
                Verdict::Fits => "fits",
                Verdict::OverSoft => "over soft",
                Verdict::OverHard => "over hard",
            }
            .into();
            reply.files.push(FitFileInfo {
                path: req.path.clone(),
                tokens: tokens as u64,
                over_hard_because: fit::unsplittable_line(&text, &opts).unwrap_or_default(),
            });
        }
        "generate" | "" => {
            let advisor = if opts.level >= 3.0 {
                if req.llm_base_url.is_empty() {
                    return Err(fit::FitError::NoAdvisor.to_string());
                }
                let advisor = LlmAdvisor::new(&req.llm_base_url, &req.llm_model)?;
                // Say so before anything is planned or written when no endpoint answers.
                advisor.ask("Reply with OK.", "OK?").map_err(|e| {
                    format!(
                        "no LLM endpoint answers at {}: {e}; nothing written",
                        req.llm_base_url
                    )
                })?;
                Some(advisor)
            } else {
                None
            };
            let report = fit::generate_with(
                path,
                &opts,
                req.dry_run,
                advisor.as_ref().map(|a| a as &dyn Advisor),
            )
            .map_err(|e| e.to_string())?;
            reply.unchanged = report.unchanged.unwrap_or_default().into();
            reply.backup = report
                .backup
                .map(|b| b.display().to_string())
                .unwrap_or_default();
            reply.files = report
                .files
                .iter()
                .map(|f| FitFileInfo {
                    path: dir.join(&f.rel).display().to_string(),
                    tokens: f.tokens as u64,
                    over_hard_because: fit::unsplittable_line(&f.text, &opts).unwrap_or_default(),
                })
                .collect();
        }
        other => return Err(format!("unknown fit action {other:?}: generate or measure")),
    }
    Ok(reply)
}

/// Writes a codebase map into `req.fit_dir` as a tree: `codebase-map.md` and its folder. A
/// re-run removes the subdocuments the previous map wrote and no longer needs; nothing else.
pub fn write_map(markdown: &str, req: &MapRequest) -> Result<Vec<FitFileInfo>, String> {
    let dir = std::path::Path::new(&req.fit_dir);
    if !dir.is_absolute() {
        return Err(format!(
            "map directory must be absolute, got {:?}",
            req.fit_dir
        ));
    }
    let opts = FitOptions {
        soft: if req.soft_threshold == 0 {
            3000
        } else {
            req.soft_threshold as usize
        },
        hard: if req.hard_threshold == 0 {
            5000
        } else {
            req.hard_threshold as usize
        },
        ..FitOptions::default()
    };
    let files = fit::plan(markdown, "codebase-map.md", &opts).map_err(|e| e.to_string())?;
    // Only what an earlier map wrote is replaced or removed (its manifest says what that
    // is); a user's file in the folder is kept, and one with a planned name stops the write.
    fit::write::write_tree(dir, &files, &dir.join("codebase-map"), false)
        .map_err(|e| e.to_string())?;
    let out = files
        .iter()
        .map(|f| FitFileInfo {
            path: dir.join(&f.rel).display().to_string(),
            tokens: f.tokens as u64,
            over_hard_because: fit::unsplittable_line(&f.text, &opts).unwrap_or_default(),
        })
        .collect();
    Ok(out)
}
