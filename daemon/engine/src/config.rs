//! The engine's configuration: every setting that changes what the engine does, in one value
//! built once by the binary that embeds the engine and passed down.
//!
//! The engine never reads the environment. [`Config::from_vars`] parses the `FITTOK_*`
//! variables from a lookup the binary supplies (its own environment), so that a daemon's
//! behaviour is decided by its own start, and [`Config::settings`] reports the effective
//! values under the same names for `fittok status`.

use std::path::PathBuf;

use crate::embed::EmbedOptions;
use crate::pack::Tuning as PackTuning;
use crate::rank::Tuning as RankTuning;
use crate::walk::WalkOptions;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{name}={value:?}: {expected}")]
pub struct ConfigError {
    pub name: &'static str,
    pub value: String,
    pub expected: &'static str,
}

/// One environment variable the engine understands.
#[derive(Debug, Clone, Copy)]
pub struct Variable {
    pub name: &'static str,
    pub doc: &'static str,
    /// Whether a client whose environment differs from the daemon's should be told: the
    /// setting changes answers or what is read (tuning knobs for benchmarks do not).
    pub matters: bool,
}

/// Every variable [`Config::from_vars`] reads.
pub const VARIABLES: &[Variable] = &[
    Variable {
        name: "FITTOK_SCRUB",
        doc: "`off` stops redacting secrets from indexed source (default on)",
        matters: true,
    },
    Variable {
        name: "FITTOK_MAX_FILE_BYTES",
        doc: "files above this many bytes are skipped (default 1048576)",
        matters: true,
    },
    Variable {
        name: "FITTOK_EMBED_MODEL",
        doc: "directory holding all-MiniLM-L6-v2 (default: <cache>/models/all-MiniLM-L6-v2)",
        matters: true,
    },
    Variable {
        name: "FITTOK_EMBED_HALF",
        doc: "`0`/`1`: keep the embedding weights in f16 (default: on in optimised builds)",
        matters: false,
    },
    Variable {
        name: "FITTOK_EMBED_BATCH_THREADS",
        doc: "threads embedding batches (default: every core; the daemon uses 1)",
        matters: false,
    },
    Variable {
        name: "FITTOK_RANK_WEIGHTS",
        doc: "fusion weights content,summary,semantic,graph,mention,reach,history (tuning)",
        matters: true,
    },
    Variable {
        name: "FITTOK_HISTORY_COMMITS",
        doc: "how many of the last commits reachable from HEAD the history signal reads (default 5000; 0 = off)",
        matters: true,
    },
    Variable {
        name: "FITTOK_PPR_TOLERANCE",
        doc: "personalised PageRank: unspread mass left per edge (tuning; default 1e-6)",
        matters: false,
    },
    Variable {
        name: "FITTOK_NODE_CAPS",
        doc: "per-node budget caps first_divisor,rest_divisor,first_n (tuning)",
        matters: true,
    },
    Variable {
        name: "FITTOK_HEADERS",
        doc: "number of file headers shown with an answer (tuning)",
        matters: true,
    },
    Variable {
        name: "FITTOK_DENSITY",
        doc: "learned order by probability per token: exponent,floor_tokens,keep or off (tuning)",
        matters: true,
    },
];

/// Everything the engine can be told. `Default` is what a user gets with no variables set,
/// without a persistent cache.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    /// Where parses and vectors are kept between runs, and where the model is looked for;
    /// `None` keeps nothing on disk.
    pub cache_dir: Option<PathBuf>,
    pub walk: WalkOptions,
    pub rank: RankTuning,
    pub pack: PackTuning,
    pub embed: EmbedOptions,
    /// How many of the last commits the history signal reads ([`crate::history`]; 0 = none).
    pub history_commits: HistoryCommits,
}

/// How many commits the history signal reads: [`HistoryCommits::DEFAULT`] unless told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HistoryCommits(pub usize);

impl HistoryCommits {
    /// A new issue's likeness to old fixes fades with age, and 5,000 commits read in well
    /// under a second on a large repository.
    pub const DEFAULT: usize = 5000;
}

impl Default for HistoryCommits {
    fn default() -> Self {
        HistoryCommits(HistoryCommits::DEFAULT)
    }
}

fn flag(name: &'static str, v: &str) -> Result<bool, ConfigError> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(ConfigError {
            name,
            value: v.to_string(),
            expected: "expected on/off, true/false, yes/no or 1/0",
        }),
    }
}

fn number<T: std::str::FromStr>(
    name: &'static str,
    v: &str,
    expected: &'static str,
) -> Result<T, ConfigError> {
    v.trim().parse().map_err(|_| ConfigError {
        name,
        value: v.to_string(),
        expected,
    })
}

fn numbers<T: std::str::FromStr>(
    name: &'static str,
    v: &str,
    n: usize,
    expected: &'static str,
) -> Result<Vec<T>, ConfigError> {
    let xs: Vec<T> = v
        .split(',')
        .map(|x| x.trim().parse())
        .collect::<Result<_, _>>()
        .map_err(|_| ConfigError {
            name,
            value: v.to_string(),
            expected,
        })?;
    if xs.len() != n {
        return Err(ConfigError {
            name,
            value: v.to_string(),
            expected,
        });
    }
    Ok(xs)
}

impl Config {
    /// Parses the variables in [`VARIABLES`] through `var` (unset or empty = default), with
    /// `cache_dir` as given. A malformed value is an error naming the variable, not a silent
    /// default.
    pub fn from_vars(
        cache_dir: Option<PathBuf>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Config, ConfigError> {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let mut c = Config {
            cache_dir,
            ..Config::default()
        };
        if let Some(v) = get("FITTOK_SCRUB") {
            c.walk.scrub = flag("FITTOK_SCRUB", &v)?;
        }
        if let Some(v) = get("FITTOK_MAX_FILE_BYTES") {
            c.walk.max_file_bytes =
                number("FITTOK_MAX_FILE_BYTES", &v, "expected a number of bytes")?;
        }
        if let Some(v) = get("FITTOK_EMBED_MODEL") {
            c.embed.model_dir = Some(PathBuf::from(v));
        }
        if let Some(v) = get("FITTOK_EMBED_HALF") {
            c.embed.half_weights = flag("FITTOK_EMBED_HALF", &v)?;
        }
        if let Some(v) = get("FITTOK_EMBED_BATCH_THREADS") {
            c.embed.batch_threads = number(
                "FITTOK_EMBED_BATCH_THREADS",
                &v,
                "expected a number of threads (0 = every core)",
            )?;
        }
        if let Some(v) = get("FITTOK_RANK_WEIGHTS") {
            let w: Vec<f32> = numbers(
                "FITTOK_RANK_WEIGHTS",
                &v,
                7,
                "expected seven numbers: content,summary,semantic,graph,mention,reach,history",
            )?;
            c.rank.weights = crate::rank::Weights {
                content: w[0],
                summary: w[1],
                semantic: w[2],
                graph: w[3],
                mention: w[4],
                reach: w[5],
                history: w[6],
            };
        }
        if let Some(v) = get("FITTOK_HISTORY_COMMITS") {
            c.history_commits = HistoryCommits(number(
                "FITTOK_HISTORY_COMMITS",
                &v,
                "expected a number of commits (0 = off)",
            )?);
        }
        if let Some(v) = get("FITTOK_PPR_TOLERANCE") {
            let t: f32 = number("FITTOK_PPR_TOLERANCE", &v, "expected a positive number")?;
            if !(t.is_finite() && t > 0.0) {
                return Err(ConfigError {
                    name: "FITTOK_PPR_TOLERANCE",
                    value: v,
                    expected: "expected a positive number",
                });
            }
            c.rank.ppr_tolerance = t;
        }
        if let Some(v) = get("FITTOK_NODE_CAPS") {
            let xs: Vec<usize> = numbers(
                "FITTOK_NODE_CAPS",
                &v,
                3,
                "expected first_divisor,rest_divisor,first_n",
            )?;
            if xs[0] == 0 || xs[1] == 0 {
                return Err(ConfigError {
                    name: "FITTOK_NODE_CAPS",
                    value: v,
                    expected: "divisors must be above 0",
                });
            }
            c.pack.node_caps = crate::pack::NodeCaps {
                first_divisor: xs[0],
                rest_divisor: xs[1],
                first_n: xs[2],
            };
        }
        if let Some(v) = get("FITTOK_HEADERS") {
            c.pack.headers = Some(number("FITTOK_HEADERS", &v, "expected a number of files")?);
        }
        if let Some(v) = get("FITTOK_DENSITY") {
            c.pack.density = if matches!(flag("FITTOK_DENSITY", &v), Ok(false)) {
                None
            } else {
                const EXPECTED: &str = "expected exponent,floor_tokens,keep or off";
                let xs: Vec<f32> = numbers("FITTOK_DENSITY", &v, 3, EXPECTED)?;
                if xs.iter().any(|x| !x.is_finite() || *x < 0.0) || xs[2].fract() != 0.0 {
                    return Err(ConfigError {
                        name: "FITTOK_DENSITY",
                        value: v,
                        expected: EXPECTED,
                    });
                }
                Some(crate::pack::DensityOrder {
                    exponent: xs[0],
                    floor_tokens: xs[1],
                    keep: xs[2] as usize,
                })
            };
        }
        Ok(c)
    }

    /// The effective value of every variable in [`VARIABLES`], in its own syntax: what a
    /// daemon reports, and what a client compares with its environment.
    pub fn settings(&self) -> Vec<(&'static str, String)> {
        let on = |b: bool| if b { "on" } else { "off" }.to_string();
        let w = &self.rank.weights;
        let caps = &self.pack.node_caps;
        vec![
            ("FITTOK_SCRUB", on(self.walk.scrub)),
            (
                "FITTOK_MAX_FILE_BYTES",
                self.walk.max_file_bytes.to_string(),
            ),
            (
                "FITTOK_EMBED_MODEL",
                self.embed
                    .model_dir
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_default(),
            ),
            ("FITTOK_EMBED_HALF", on(self.embed.half_weights)),
            (
                "FITTOK_EMBED_BATCH_THREADS",
                self.embed.batch_threads.to_string(),
            ),
            (
                "FITTOK_RANK_WEIGHTS",
                format!(
                    "{},{},{},{},{},{},{}",
                    w.content, w.summary, w.semantic, w.graph, w.mention, w.reach, w.history
                ),
            ),
            ("FITTOK_HISTORY_COMMITS", self.history_commits.0.to_string()),
            ("FITTOK_PPR_TOLERANCE", self.rank.ppr_tolerance.to_string()),
            (
                "FITTOK_NODE_CAPS",
                format!(
                    "{},{},{}",
                    caps.first_divisor, caps.rest_divisor, caps.first_n
                ),
            ),
            (
                "FITTOK_HEADERS",
                self.pack.headers.map(|h| h.to_string()).unwrap_or_default(),
            ),
            (
                "FITTOK_DENSITY",
                self.pack.density.map_or("off".to_string(), |d| {
                    format!("{},{},{}", d.exponent, d.floor_tokens, d.keep)
                }),
            ),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn no_variables_is_the_default() {
        assert_eq!(
            Config::from_vars(None, vars(&[])).unwrap(),
            Config::default()
        );
    }

    #[test]
    fn every_variable_parses_and_reads_back_the_same() {
        let set = [
            ("FITTOK_SCRUB", "off"),
            ("FITTOK_MAX_FILE_BYTES", "1000"),
            ("FITTOK_EMBED_MODEL", "/models/minilm"),
            ("FITTOK_EMBED_HALF", "on"),
            ("FITTOK_EMBED_BATCH_THREADS", "3"),
            ("FITTOK_RANK_WEIGHTS", "1,2,3,4,5,6,7"),
            ("FITTOK_HISTORY_COMMITS", "300"),
            ("FITTOK_PPR_TOLERANCE", "0.00001"),
            ("FITTOK_NODE_CAPS", "3,9,1"),
            ("FITTOK_HEADERS", "4"),
            ("FITTOK_DENSITY", "1,200,2"),
        ];
        let c = Config::from_vars(None, vars(&set)).unwrap();
        assert_eq!(
            c.settings(),
            set.iter()
                .map(|(k, v)| (*k, v.to_string()))
                .collect::<Vec<_>>()
        );
        let names: Vec<&str> = VARIABLES.iter().map(|v| v.name).collect();
        assert_eq!(names, set.iter().map(|(k, _)| *k).collect::<Vec<_>>());
    }

    #[test]
    fn a_malformed_value_is_an_error_naming_the_variable() {
        for (name, value) in [
            ("FITTOK_SCRUB", "maybe"),
            ("FITTOK_RANK_WEIGHTS", "1,2"),
            ("FITTOK_HISTORY_COMMITS", "-3"),
            ("FITTOK_NODE_CAPS", "0,8,2"),
            ("FITTOK_PPR_TOLERANCE", "-1"),
            ("FITTOK_MAX_FILE_BYTES", "big"),
            ("FITTOK_DENSITY", "0.5,100,1.5"),
            ("FITTOK_DENSITY", "0.5,-1,1"),
        ] {
            let e = Config::from_vars(None, vars(&[(name, value)])).unwrap_err();
            assert_eq!(e.name, name);
            assert!(e.to_string().starts_with(&format!("{name}=")), "{e}");
        }
    }
}
