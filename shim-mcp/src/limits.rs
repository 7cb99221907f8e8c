//! What a client keeps of one tool result, and answers sized to fit it.
//!
//! Clients cut long tool results without telling the server: Codex keeps 10 KiB or 256 lines,
//! GitHub Copilot's CLI 10 KB, VS Code's Copilot about 7 KB; Claude Code moves a result over
//! 50,000 characters into a file the model must read back. An answer cut mid-block loses its
//! end silently, so when a client is known (by `clientInfo.name`) or declares its limit
//! (`capabilities.experimental.toolResultLimit = {"bytes": N, "lines": M}`), answers are sized
//! to fit it, and the `→ id` pointers page through the rest.

use rmcp::model::InitializeRequestParams;

/// Bytes and lines a client keeps of one result (`usize::MAX`: no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultLimit {
    pub bytes: usize,
    pub lines: usize,
}

/// The declared limit's key in `capabilities.experimental`.
pub const DECLARED: &str = "toolResultLimit";

/// Known clients, by a lowercase fragment of `clientInfo.name`.
const KNOWN: &[(&str, ResultLimit)] = &[
    (
        "codex",
        ResultLimit {
            bytes: 10_240,
            lines: 256,
        },
    ),
    (
        "copilot",
        ResultLimit {
            bytes: 10_000,
            lines: usize::MAX,
        },
    ),
    (
        "visual studio code",
        ResultLimit {
            bytes: 7_000,
            lines: usize::MAX,
        },
    ),
    (
        "claude-code",
        ResultLimit {
            bytes: 50_000,
            lines: usize::MAX,
        },
    ),
];

/// The limit of the client that sent `init`: declared, else known by name, else none.
pub fn of(init: &InitializeRequestParams) -> Option<ResultLimit> {
    let declared = init
        .capabilities
        .experimental
        .as_ref()
        .and_then(|e| e.get(DECLARED))
        .map(|o| {
            let get = |k: &str| {
                o.get(k)
                    .and_then(|v| v.as_u64())
                    .and_then(|n| usize::try_from(n).ok())
                    .filter(|&n| n > 0)
            };
            (get("bytes"), get("lines"))
        })
        .filter(|(b, l)| b.is_some() || l.is_some());
    if let Some((bytes, lines)) = declared {
        return Some(ResultLimit {
            bytes: bytes.unwrap_or(usize::MAX),
            lines: lines.unwrap_or(usize::MAX),
        });
    }
    let name = init.client_info.name.to_lowercase();
    KNOWN
        .iter()
        .find(|(fragment, _)| name.contains(fragment))
        .map(|(_, l)| *l)
}

/// Share of a limit an answer aims at: room for the client's own framing of the result.
const AIM: f64 = 0.92;

impl ResultLimit {
    pub fn fits(&self, text: &str) -> bool {
        text.len() <= self.bytes && text.lines().count() <= self.lines
    }

    /// The budget to ask for first, from what answers in this session measured (bytes and
    /// lines per token).
    pub fn first_budget(&self, wanted: u32, per_token: PerToken) -> u32 {
        let by_bytes = self.bytes as f64 * AIM / per_token.bytes;
        let by_lines = self.lines as f64 * AIM / per_token.lines;
        let fitting = by_bytes.min(by_lines).min(f64::from(u32::MAX)) as u32;
        let fitting = fitting.max(fittok_proto::MIN_BUDGET);
        if wanted == 0 {
            fitting
        } else {
            wanted.min(fitting)
        }
    }

    /// The budget to try after an answer of `budget` tokens came out as `text`, too big.
    pub fn smaller_budget(&self, budget: u32, text: &str) -> u32 {
        let by_bytes = self.bytes as f64 * AIM / text.len().max(1) as f64;
        let by_lines = self.lines as f64 * AIM / text.lines().count().max(1) as f64;
        let scale = by_bytes.min(by_lines).min(0.9);
        ((f64::from(budget) * scale) as u32).max(fittok_proto::MIN_BUDGET)
    }
}

/// The end of an answer that still does not fit at the smallest budget: whole lines kept
/// up to the limit, and a line saying so.
pub fn cut(text: &str, limit: ResultLimit) -> String {
    const NOTE: &str = "… (cut to fit this client's result limit; expand the ids above for more)\n";
    let mut out = String::new();
    for (i, line) in text.split_inclusive('\n').enumerate() {
        if out.len() + line.len() + NOTE.len() > limit.bytes || i + 2 > limit.lines {
            break;
        }
        out.push_str(line);
    }
    out.push_str(NOTE);
    out
}

/// Bytes and lines per token of the answers seen so far (a fresh session starts from what
/// code measures: about 4 bytes and 0.1 lines per cl100k token).
#[derive(Debug, Clone, Copy)]
pub struct PerToken {
    pub bytes: f64,
    pub lines: f64,
}

impl Default for PerToken {
    fn default() -> Self {
        PerToken {
            bytes: 4.2,
            lines: 0.12,
        }
    }
}

impl PerToken {
    /// Learns from one answer of `tokens` tokens (weighted average, recent answers count more).
    pub fn learn(&mut self, text: &str, tokens: u32) {
        if tokens < 50 {
            return;
        }
        let t = f64::from(tokens);
        self.bytes = 0.5 * self.bytes + 0.5 * text.len() as f64 / t;
        self.lines = 0.5 * self.lines + 0.5 * text.lines().count() as f64 / t;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(name: &str, experimental: Option<serde_json::Value>) -> InitializeRequestParams {
        let mut v = serde_json::json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": name, "version": "1"},
        });
        if let Some(e) = experimental {
            v["capabilities"]["experimental"] = e;
        }
        serde_json::from_value(v).expect("initialize params")
    }

    #[test]
    fn known_clients_and_declared_limits() {
        assert_eq!(
            of(&init("codex-mcp-client", None)).map(|l| l.lines),
            Some(256)
        );
        assert_eq!(
            of(&init("claude-code", None)).map(|l| l.bytes),
            Some(50_000)
        );
        assert_eq!(of(&init("some-agent", None)), None);
        let declared = of(&init(
            "codex-mcp-client",
            Some(serde_json::json!({"toolResultLimit": {"bytes": 3000}})),
        ));
        assert_eq!(
            declared,
            Some(ResultLimit {
                bytes: 3000,
                lines: usize::MAX
            })
        );
    }

    #[test]
    fn a_cut_answer_fits_and_says_so() {
        let l = ResultLimit {
            bytes: 500,
            lines: 10,
        };
        let text = "a line of an answer\n".repeat(100);
        let cut = cut(&text, l);
        assert!(l.fits(&cut), "{cut}");
        assert!(cut.ends_with("expand the ids above for more)\n"));
    }

    #[test]
    fn budgets_shrink_towards_the_limit() {
        let l = ResultLimit {
            bytes: 10_240,
            lines: 256,
        };
        let first = l.first_budget(0, PerToken::default());
        assert!((1500..2200).contains(&first), "{first}");
        assert_eq!(l.first_budget(1000, PerToken::default()), 1000);
        let big = "x".repeat(100) + &"\n".repeat(400);
        assert!(l.smaller_budget(4000, &big) < 4000 * 256 / 400);
        assert_eq!(l.smaller_budget(210, &big), fittok_proto::MIN_BUDGET);
    }
}
