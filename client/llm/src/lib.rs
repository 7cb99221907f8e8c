//! fittok's one place that talks to language models (the CLI streams answers with it; the
//! daemon's FIT levels 3–4 call it for summaries and placement).
//!
//! Streamed LLM answers for `fittok query`: the question plus the code slice go to a model,
//! and its answer is written to stdout as it arrives. Anthropic Messages API
//! (`ANTHROPIC_API_KEY`), OpenAI chat completions (`OPENAI_API_KEY`), or any OpenAI-compatible
//! server (`FITTOK_LLM_BASE_URL` + `FITTOK_LLM_MODEL`: llama.cpp, Ollama, vLLM).

use std::io::Write;
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Api {
    Anthropic,
    OpenAi,
}

#[derive(Debug, Clone)]
pub struct Provider {
    pub api: Api,
    pub base_url: String,
    pub key: Option<String>,
    pub model: String,
    /// The variable the key came from, named when the provider refuses it.
    pub key_var: &'static str,
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("cannot reach {url}: {reason}")]
    Connect { url: String, reason: String },
    #[error("{provider} refused the key (401): check {var}")]
    Unauthorized { provider: String, var: &'static str },
    #[error("{provider} is rate limiting (429): wait and retry{detail}")]
    RateLimited { provider: String, detail: String },
    #[error("{provider} failed ({status}){detail}")]
    Server {
        provider: String,
        status: u16,
        detail: String,
    },
    #[error("the connection dropped before the answer finished")]
    Dropped,
    #[error("{provider} reported an error: {message}")]
    Stream { provider: String, message: String },
}

const SYSTEM: &str = "You answer questions about a codebase using only the code given below it. \
Cite the code you rely on as path:line (the code blocks number their first line and every \
tenth; count from the nearest). If the code does not contain the answer, say so and name what \
is missing instead of guessing.";

/// An error with its causes (`outer: inner`): reqwest's own text omits why a connection failed.
fn source_chain(e: &dyn std::error::Error) -> String {
    std::iter::successors(Some(e), |e| e.source())
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}

impl Provider {
    /// The provider a client's environment configures, if any, read through `var` (the
    /// binary passes its own environment); `model` overrides the provider's default model.
    pub fn from_vars(
        model: Option<&str>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Option<Provider> {
        let env = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let pick = |default: &str| model.map(str::to_string).unwrap_or_else(|| default.into());
        if let Some(base) = env("FITTOK_LLM_BASE_URL") {
            return Some(Provider {
                api: Api::OpenAi,
                base_url: base.trim_end_matches('/').into(),
                key: env("FITTOK_LLM_API_KEY").or_else(|| env("OPENAI_API_KEY")),
                model: pick(&env("FITTOK_LLM_MODEL").unwrap_or_else(|| "default".into())),
                key_var: "FITTOK_LLM_API_KEY",
            });
        }
        if let Some(key) = env("ANTHROPIC_API_KEY") {
            return Some(Provider {
                api: Api::Anthropic,
                base_url: env("ANTHROPIC_BASE_URL")
                    .unwrap_or_else(|| "https://api.anthropic.com".into())
                    .trim_end_matches('/')
                    .into(),
                key: Some(key),
                model: pick("claude-haiku-4-5"),
                key_var: "ANTHROPIC_API_KEY",
            });
        }
        env("OPENAI_API_KEY").map(|key| Provider {
            api: Api::OpenAi,
            base_url: env("OPENAI_BASE_URL")
                .unwrap_or_else(|| "https://api.openai.com/v1".into())
                .trim_end_matches('/')
                .into(),
            key: Some(key),
            model: pick("gpt-4o-mini"),
            key_var: "OPENAI_API_KEY",
        })
    }

    fn name(&self) -> String {
        match self.api {
            Api::Anthropic => "Anthropic".into(),
            Api::OpenAi => self.base_url.clone(),
        }
    }

    /// An OpenAI-compatible endpoint named explicitly (FIT's LLM levels).
    pub fn openai_compatible(base_url: &str, model: &str, key: Option<String>) -> Provider {
        Provider {
            api: Api::OpenAi,
            base_url: base_url.trim_end_matches('/').into(),
            key,
            model: model.into(),
            key_var: "FITTOK_LLM_API_KEY",
        }
    }

    fn request(&self, system: &str, user: &str) -> (String, serde_json::Value) {
        match self.api {
            Api::Anthropic => (
                format!("{}/v1/messages", self.base_url),
                serde_json::json!({
                    "model": self.model, "max_tokens": 2048, "stream": true, "system": system,
                    "messages": [{"role": "user", "content": user}],
                }),
            ),
            Api::OpenAi => (
                format!("{}/chat/completions", self.base_url),
                serde_json::json!({
                    "model": self.model, "stream": true,
                    "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
                }),
            ),
        }
    }

    /// Streams the answer to a question about `code` into `out`; returns when the model has
    /// finished.
    pub async fn answer(
        &self,
        question: &str,
        code: &str,
        out: &mut impl Write,
    ) -> Result<(), LlmError> {
        self.stream_chat(SYSTEM, &format!("Question: {question}\n\n{code}"), out)
            .await?;
        let _ = out.write_all(b"\n");
        Ok(())
    }

    /// The model's whole reply to one system + user exchange.
    pub async fn chat(&self, system: &str, user: &str) -> Result<String, LlmError> {
        let mut out = Vec::new();
        self.stream_chat(system, user, &mut out).await?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// Streams the reply into `out` as it arrives.
    pub async fn stream_chat(
        &self,
        system: &str,
        user: &str,
        out: &mut impl Write,
    ) -> Result<(), LlmError> {
        let (url, body) = self.request(system, user);
        let client = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| LlmError::Connect {
                url: url.clone(),
                reason: e.to_string(),
            })?;
        let mut req = client.post(&url).json(&body);
        req = match (&self.api, &self.key) {
            (Api::Anthropic, Some(key)) => req
                .header("x-api-key", key)
                .header("anthropic-version", "2023-06-01"),
            (Api::OpenAi, Some(key)) => req.bearer_auth(key),
            (_, None) => req,
        };
        let mut resp = req.send().await.map_err(|e| LlmError::Connect {
            url: url.clone(),
            reason: source_chain(&e),
        })?;
        let status = resp.status().as_u16();
        if status != 200 {
            let text = resp.text().await.unwrap_or_default();
            let detail = error_message(&text)
                .map(|m| format!(": {m}"))
                .unwrap_or_default();
            return Err(match status {
                401 | 403 => LlmError::Unauthorized {
                    provider: self.name(),
                    var: self.key_var,
                },
                429 => LlmError::RateLimited {
                    provider: self.name(),
                    detail,
                },
                _ => LlmError::Server {
                    provider: self.name(),
                    status,
                    detail,
                },
            });
        }
        let mut buf = String::new();
        let mut finished = false;
        loop {
            let chunk = match resp.chunk().await {
                Ok(Some(c)) => c,
                Ok(None) => break,
                Err(_) => return Err(LlmError::Dropped),
            };
            buf.push_str(&String::from_utf8_lossy(&chunk));
            while let Some(end) = buf.find("\n\n") {
                let event: String = buf.drain(..end + 2).collect();
                for line in event.lines() {
                    let Some(data) = line.strip_prefix("data:").map(str::trim) else {
                        continue;
                    };
                    match self.on_data(data)? {
                        Some(Delta::Text(t)) => {
                            let _ = out.write_all(t.as_bytes());
                            let _ = out.flush();
                        }
                        Some(Delta::Done) => finished = true,
                        None => {}
                    }
                }
            }
            if finished {
                break;
            }
        }
        if !finished {
            return Err(LlmError::Dropped);
        }
        Ok(())
    }

    fn on_data(&self, data: &str) -> Result<Option<Delta>, LlmError> {
        if data == "[DONE]" {
            return Ok(Some(Delta::Done));
        }
        let Ok(v) = serde_json::from_str::<serde_json::Value>(data) else {
            return Ok(None);
        };
        if let Some(message) = v.get("error").and_then(|e| {
            e.get("message")
                .and_then(|m| m.as_str())
                .or_else(|| e.as_str())
        }) {
            return Err(LlmError::Stream {
                provider: self.name(),
                message: message.into(),
            });
        }
        Ok(match self.api {
            Api::Anthropic => match v.get("type").and_then(|t| t.as_str()) {
                Some("content_block_delta") => {
                    v["delta"]["text"].as_str().map(|t| Delta::Text(t.into()))
                }
                Some("message_stop") => Some(Delta::Done),
                _ => None,
            },
            Api::OpenAi => {
                let choice = &v["choices"][0];
                if let Some(t) = choice["delta"]["content"].as_str() {
                    Some(Delta::Text(t.into()))
                } else if choice["finish_reason"].is_string() {
                    // Some servers end with a finish reason and no [DONE].
                    Some(Delta::Done)
                } else {
                    None
                }
            }
        })
    }
}

enum Delta {
    Text(String),
    Done,
}

/// The message of a provider's JSON error body, if it has one.
fn error_message(body: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(body).ok()?;
    v["error"]["message"]
        .as_str()
        .or_else(|| v["message"].as_str())
        .map(str::to_string)
}
