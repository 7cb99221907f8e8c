//! The Fit request: wire message ↔ `fittok_engine::fit`. Used by the RPC and by `fittokd fit`.

use fittok_proto::v1::{FitAction, FitFileInfo, FitReply, FitRequest, FitVerdict, MapRequest};

use fittok_engine::fit::{self, AdviceError, Advisor, Estimator, FitOptions, Level, Verdict};
use fittok_llm::Provider;

use super::ServiceError;

/// Levels 3–4: a model behind an OpenAI-compatible endpoint, asked synchronously from the
/// blocking pool (or from `fittokd fit`, which has no runtime of its own).
struct LlmAdvisor {
    provider: Provider,
    runtime: Option<tokio::runtime::Runtime>,
}

impl LlmAdvisor {
    fn new(base_url: &str, model: &str, key: Option<&str>) -> Result<LlmAdvisor, ServiceError> {
        let key = key.map(str::to_string);
        let runtime = match tokio::runtime::Handle::try_current() {
            Ok(_) => None,
            Err(_) => Some(
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| ServiceError::Internal(format!("no runtime for the LLM: {e}")))?,
            ),
        };
        let model = if model.is_empty() { "default" } else { model };
        Ok(LlmAdvisor {
            provider: Provider::openai_compatible(base_url, model, key),
            runtime,
        })
    }

    fn ask(&self, system: &str, user: &str) -> Result<String, AdviceError> {
        let fut = self.provider.chat(system, user);
        let reply = match &self.runtime {
            Some(rt) => rt.block_on(fut),
            None => tokio::runtime::Handle::current().block_on(fut),
        };
        reply.map_err(|e| AdviceError(e.to_string()))
    }
}

impl Advisor for LlmAdvisor {
    fn summary(&self, section: &str) -> Result<String, AdviceError> {
        let text: String = section.chars().take(12_000).collect();
        self.ask(
            "You summarise one section of a Markdown document for a reader deciding whether to open it. Reply with one or two plain sentences saying what the section contains; no preamble, no Markdown.",
            &text,
        )
    }

    fn importance(
        &self,
        sections: &[String],
        task: Option<&str>,
    ) -> Result<Vec<usize>, AdviceError> {
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
            .ok_or_else(|| AdviceError(format!("no ranking in the reply: {reply:?}")))?;
        let end = reply
            .rfind(']')
            .ok_or_else(|| AdviceError(format!("no ranking in the reply: {reply:?}")))?;
        let order: Vec<usize> = serde_json::from_str::<Vec<serde_json::Value>>(&reply[start..=end])
            .map_err(|e| AdviceError(format!("unreadable ranking {reply:?}: {e}")))?
            .iter()
            .filter_map(|v| v.as_u64().map(|n| n as usize))
            .filter(|&i| i < sections.len())
            .collect();
        Ok(order)
    }
}

/// A threshold from the wire: 0 (unset) takes the default.
fn nonzero_or(v: u32, default: usize) -> usize {
    if v == 0 { default } else { v as usize }
}

/// Options from a request; zero fields take the defaults (a client that sends them all, as
/// `fittok-request` does, gets exactly what it asked for).
pub fn options(req: &FitRequest) -> Result<FitOptions, ServiceError> {
    let d = FitOptions::default();
    let or = nonzero_or;
    let estimator = match req.estimator.as_str() {
        "" | "cl100k" => Estimator::Cl100k,
        "chars4" => Estimator::Chars4,
        other => {
            return Err(ServiceError::BadRequest(format!(
                "unknown estimator {other:?}: use cl100k or chars4"
            )));
        }
    };
    Ok(FitOptions {
        level: if req.level == 0.0 {
            Level::Structure
        } else {
            Level::from_number(req.level)?
        },
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

/// Runs a fit request; levels 3–4 send `llm_key` to their endpoint.
pub fn run(req: &FitRequest, llm_key: Option<&str>) -> Result<FitReply, ServiceError> {
    if !std::path::Path::new(&req.path).is_absolute() {
        return Err(ServiceError::BadRequest(format!(
            "document path must be absolute, got {:?}",
            req.path
        )));
    }
    let opts = options(req)?;
    let path = std::path::Path::new(&req.path);
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut reply = FitReply {
        soft_threshold: opts.soft as u32,
        hard_threshold: opts.hard as u32,
        ..FitReply::default()
    };
    match req.action() {
        FitAction::Measure => {
            if path.is_dir() {
                return Err(fit::FitError::IsDirectory(path.to_path_buf()).into());
            }
            let bytes = std::fs::read(path).map_err(|source| {
                if source.kind() == std::io::ErrorKind::NotFound {
                    ServiceError::BadRequest(format!("{} does not exist", path.display()))
                } else {
                    ServiceError::Fit(fit::FitError::Io {
                        path: path.to_path_buf(),
                        source,
                    })
                }
            })?;
            // What cannot be Markdown is the request's fault, not the disk's.
            if bytes.contains(&0) {
                return Err(fit::FitError::Binary(path.to_path_buf()).into());
            }
            let text =
                String::from_utf8(bytes).map_err(|_| fit::FitError::NotUtf8(path.to_path_buf()))?;
            let tokens = opts.estimator.count(&text);
            reply.set_verdict(match fit::verdict(tokens, &opts) {
                Verdict::Fits => FitVerdict::Fits,
                Verdict::OverSoft => FitVerdict::OverSoft,
                Verdict::OverHard => FitVerdict::OverHard,
            });
            reply.files.push(FitFileInfo {
                path: req.path.clone(),
                tokens: tokens as u64,
                over_hard_because: fit::unsplittable_line(&text, &opts).unwrap_or_default(),
            });
        }
        FitAction::Generate | FitAction::Unspecified => {
            let advisor = if opts.level.uses_llm() {
                if req.llm_base_url.is_empty() {
                    return Err(fit::FitError::NoAdvisor.into());
                }
                let advisor = LlmAdvisor::new(&req.llm_base_url, &req.llm_model, llm_key)?;
                // Say so before anything is planned or written when no endpoint answers.
                advisor.ask("Reply with OK.", "OK?").map_err(|e| {
                    ServiceError::Llm(format!(
                        "no LLM endpoint answers at {}: {e}; nothing written",
                        req.llm_base_url
                    ))
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
            )?;
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
    }
    Ok(reply)
}

/// Writes a codebase map into `req.fit_dir` as a tree: `codebase-map.md` and its folder. A
/// re-run removes the subdocuments the previous map wrote and no longer needs; nothing else.
pub fn write_map(markdown: &str, req: &MapRequest) -> Result<Vec<FitFileInfo>, ServiceError> {
    let dir = std::path::Path::new(&req.fit_dir);
    if !dir.is_absolute() {
        return Err(ServiceError::BadRequest(format!(
            "map directory must be absolute, got {:?}",
            req.fit_dir
        )));
    }
    let d = FitOptions::default();
    let opts = FitOptions {
        soft: nonzero_or(req.soft_threshold, d.soft),
        hard: nonzero_or(req.hard_threshold, d.hard),
        ..d
    };
    let files = fit::plan(markdown, "codebase-map.md", &opts)?;
    // Only what an earlier map wrote is replaced or removed (its manifest says what that
    // is); a user's file in the folder is kept, and one with a planned name stops the write.
    fit::write::write_tree(dir, &files, &dir.join("codebase-map"), false)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use fittok_request::Request;

    /// The defaults a client sends (fittok-request) are the engine's own: a request with every
    /// field at its command-line default plans exactly as `FitOptions::default()`.
    #[test]
    fn request_defaults_are_the_engines() {
        let values = fittok_request::Values::defaults(
            fittok_request::fit::Fit::PARAMS,
            fittok_request::Surface::Cli,
        );
        let req = fittok_request::fit::request(
            FitAction::Generate,
            "/doc.md".into(),
            &fittok_request::fit::FitArgs::from_values(&values),
        );
        let from_request = options(&req).unwrap();
        let d = FitOptions::default();
        assert_eq!(
            (
                from_request.level,
                from_request.soft,
                from_request.hard,
                from_request.inline_threshold,
                from_request.inline_reduction,
                from_request.trivial_extension,
                from_request.min_segments,
                &from_request.inline_languages,
                from_request.estimator,
            ),
            (
                d.level,
                d.soft,
                d.hard,
                d.inline_threshold,
                d.inline_reduction,
                d.trivial_extension,
                d.min_segments,
                &d.inline_languages,
                d.estimator,
            )
        );
    }
}
