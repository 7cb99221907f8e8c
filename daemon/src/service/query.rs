//! The Query and Navigate requests ↔ the engine, in one place: the daemon's RPCs and
//! `fittokd query` convert here.

use std::time::Instant;

use fittok_engine::navigate::{Direction, Navigation};
use fittok_engine::rank::Intent;
use fittok_engine::tokens::Encoding;
use fittok_engine::{Engine, Query};

use crate::resident::Need;
use fittok_proto::v1::{NavigateRequest, QueryReply, QueryRequest};

use super::ServiceError;

/// What a question needs of a repository's first snapshot: all of it when it asks for tests —
/// by word (`Intent`) or by naming one (`testParse`, `ParserTest`, `test_parse`; in a long
/// issue, in its title: `Intent::asked`) — else an answer from the sources may come before the
/// tests are indexed.
pub fn need(question: &str) -> Need {
    let asked = Intent::asked(question);
    let names_a_test = asked
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .map(str::to_ascii_lowercase)
        .any(|w| w.starts_with("test") || w.ends_with("test") || w.ends_with("tests"));
    if names_a_test || Intent::of(question).tests {
        Need::Everything
    } else {
        Need::SourcesFirst
    }
}

/// The engine's query for a request, the budget capped by `max_budget` (0 = none).
pub fn engine_query(req: &QueryRequest, max_budget: u32) -> Result<Query, ServiceError> {
    fittok_proto::check_budget(u64::from(req.budget)).map_err(ServiceError::BadRequest)?;
    if req.question.trim().is_empty() {
        return Err(ServiceError::BadRequest(
            "the question is empty: ask about the code in words".into(),
        ));
    }
    Ok(Query {
        question: req.question.clone(),
        budget: fittok_request::cap_budget(req.budget, max_budget) as usize,
        encoding: if req.o200k {
            Encoding::O200k
        } else {
            Encoding::Cl100k
        },
        show_savings: req.show_savings,
        explain: req.explain as usize,
        exclude: req
            .exclude
            .iter()
            .enumerate()
            .map(|(i, id)| {
                (
                    id.clone(),
                    req.exclude_versions.get(i).copied().unwrap_or(0),
                )
            })
            .collect(),
        freshness: None,
        ranker: fittok_engine::rank::Ranker::default(),
        semantic_note: None,
    })
}

/// Answers `q` and builds the reply (`json`: with the answer as JSON too); `started` is when
/// the request arrived.
pub fn reply(
    engine: &Engine,
    q: &Query,
    json: bool,
    started: Instant,
) -> Result<QueryReply, ServiceError> {
    answer_reply(engine, engine.query(q), json, started)
}

/// The navigation `req` asks for, the budget capped by `max_budget` (0 = none).
pub fn engine_navigation(
    req: &NavigateRequest,
    max_budget: u32,
) -> Result<Navigation, ServiceError> {
    fittok_proto::check_budget(u64::from(req.budget)).map_err(ServiceError::BadRequest)?;
    let direction = if req.direction.is_empty() {
        Direction::Callers
    } else {
        Direction::parse(&req.direction).ok_or_else(|| {
            ServiceError::BadRequest(format!(
                "direction {:?} is not one of {}",
                req.direction,
                Direction::NAMES.join(", ")
            ))
        })?
    };
    if req.depth > fittok_engine::navigate::MAX_DEPTH {
        return Err(ServiceError::BadRequest(format!(
            "depth {} is outside 1..={}",
            req.depth,
            fittok_engine::navigate::MAX_DEPTH
        )));
    }
    Ok(Navigation {
        depth: if req.depth == 0 {
            fittok_engine::navigate::DEFAULT_DEPTH
        } else {
            req.depth
        },
        budget: fittok_request::cap_budget(req.budget, max_budget) as usize,
        encoding: if req.o200k {
            Encoding::O200k
        } else {
            Encoding::Cl100k
        },
        ..Navigation::new(req.target.clone(), direction)
    })
}

/// The reply carrying `answer` (`json`: as JSON too); `started` is when the request arrived.
pub fn answer_reply(
    engine: &Engine,
    answer: fittok_engine::Answer,
    json: bool,
    started: Instant,
) -> Result<QueryReply, ServiceError> {
    let json = if json {
        serde_json::to_string_pretty(&answer)
            .map_err(|e| ServiceError::Internal(format!("answer to JSON: {e}")))?
    } else {
        String::new()
    };
    Ok(QueryReply {
        node_ids: answer
            .nodes
            .iter()
            .map(|n| n.id.clone())
            .chain(answer.inside_whole.iter().map(|s| s.id.clone()))
            .collect(),
        node_versions: answer
            .nodes
            .iter()
            .map(|n| n.version)
            .chain(answer.inside_whole.iter().map(|s| s.version))
            .collect(),
        tokens: answer.tokens as u32,
        confidence: answer.confidence,
        names_repo: answer.names_repo,
        matched: answer.matched,
        semantic_coverage: engine.semantic.coverage(),
        freshness: answer.provenance.freshness.clone(),
        text: answer.text,
        json,
        elapsed_us: started.elapsed().as_micros() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn questions_about_tests_need_everything() {
        assert_eq!(need("how are redirects handled"), Need::SourcesFirst);
        for q in [
            "why does the retry test fail",
            "testRetryBackoff is flaky",
            "what does RetryPolicyTest check",
            "test_retry_backoff times out",
        ] {
            assert_eq!(need(q), Need::Everything, "{q}");
        }
        // A long issue names tests in passing; its title says what it is about.
        let body = "I tested it locally and the test suite passes.\n".repeat(20);
        assert_eq!(
            need(&format!("Retries ignore the backoff\n\n{body}")),
            Need::SourcesFirst
        );
        assert_eq!(
            need(&format!("Retry test is flaky\n\n{body}")),
            Need::Everything
        );
    }
}
