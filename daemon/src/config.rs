//! The daemon's configuration: the engine's [`Config`] plus what only a daemon does (budget cap,
//! model download, LLM key for FIT levels 3–4). Parsed once by `fittokd` from its own
//! environment and passed down; reported in `status` so that a client can tell when its
//! environment and the running daemon's disagree.

use std::path::PathBuf;
use std::sync::Arc;

use fittok_engine::Config;
use fittok_engine::config::{ConfigError, VARIABLES};

use crate::config_file::ConfigFile;
use crate::download::ModelSource;

/// The daemon's own variables (the engine's are [`fittok_engine::config::VARIABLES`]).
pub const DAEMON_VARIABLES: &[fittok_engine::config::Variable] = &[
    fittok_engine::config::Variable {
        name: "FITTOK_MAX_BUDGET",
        doc: "caps every answer's budget, including `0` (no cap) requests (default: none)",
        matters: true,
    },
    fittok_engine::config::Variable {
        name: "FITTOK_DEFER_TESTS_OVER",
        doc: "a repository's first build leaves its test files out when they hold at least this many bytes, and adds them right after (default 8388608; 0: never)",
        matters: false,
    },
    fittok_engine::config::Variable {
        name: "HF_ENDPOINT",
        doc: "where the embedding model is downloaded from (default https://huggingface.co)",
        matters: false,
    },
    fittok_engine::config::Variable {
        name: "HF_HUB_OFFLINE",
        doc: "`1` never downloads the model",
        matters: false,
    },
    fittok_engine::config::Variable {
        name: "FITTOK_MODEL_REVISION",
        doc: "the model's revision on the hub (default main; files are pinned by sha256)",
        matters: false,
    },
    fittok_engine::config::Variable {
        name: "FITTOK_LLM_API_KEY",
        doc: "key for FIT levels 3-4 (else OPENAI_API_KEY); reported as set or not, never shown",
        matters: true,
    },
];

/// A first build leaves test files out when together they hold this many bytes. Parsing runs
/// at ~10 MB/s per core here: below this, they cost a first answer less than half a second;
/// apache/kafka's 35 MB of tests (57 % of its sources) cost it ~2 s.
pub const DEFAULT_DEFER_TESTS_OVER: u64 = 8 << 20;

#[derive(Debug, Clone)]
pub struct DaemonConfig {
    pub engine: Arc<Config>,
    /// Caps every query's budget (0 = none).
    pub max_budget: u32,
    /// A first build leaves test files out when together they hold at least this many bytes
    /// (0 = never; see `resident::Need`).
    pub defer_tests_over: u64,
    /// Where the embedding model comes from when it is not on disk (`None`: never fetched,
    /// because `FITTOK_EMBED_MODEL` names it or `HF_HUB_OFFLINE` is set).
    pub model_download: Option<ModelSource>,
    /// Why the model is not fetched, when offline.
    pub no_download_note: Option<String>,
    /// The key FIT levels 3–4 send to their endpoint.
    pub llm_api_key: Option<String>,
    /// The variables that were set (non-empty) when this was parsed.
    pub set_vars: Vec<&'static str>,
    /// The variables the configuration file set and the environment did not.
    pub file_vars: Vec<&'static str>,
    /// The configuration file read (empty, with no path, when none was looked for).
    pub file: ConfigFile,
}

/// The serve command's settings that a file can set too (flags and variables override it).
pub const SERVE_VARIABLES: &[&str] = &[
    "FITTOK_IDLE_TIMEOUT",
    "FITTOK_MEMORY_BUDGET_MB",
    "FITTOK_AUTOWATCH",
];

/// Every setting a configuration file may hold, by variable name.
pub fn file_settings() -> Vec<&'static str> {
    VARIABLES
        .iter()
        .chain(DAEMON_VARIABLES)
        .map(|v| v.name)
        .chain(SERVE_VARIABLES.iter().copied())
        .collect()
}

fn is_on(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

impl DaemonConfig {
    /// Parses the engine's and the daemon's settings from `env` (the process's environment)
    /// over `file` (the configuration file): a variable set in the environment wins.
    pub fn from_sources(
        cache_dir: Option<PathBuf>,
        env: impl Fn(&str) -> Option<String>,
        file: &ConfigFile,
    ) -> Result<DaemonConfig, ConfigError> {
        let env = |name: &str| env(name).filter(|v| !v.trim().is_empty());
        let mut config =
            DaemonConfig::from_vars(cache_dir, |name| env(name).or_else(|| file.get(name)))?;
        let names = VARIABLES.iter().chain(DAEMON_VARIABLES).map(|v| v.name);
        config.set_vars = names.clone().filter(|name| env(name).is_some()).collect();
        config.file_vars = names
            .filter(|name| env(name).is_none() && file.sets(name))
            .collect();
        config.file = file.clone();
        Ok(config)
    }

    /// Where `name`'s value came from: "environment", "config file" or "default".
    pub fn source_of(&self, name: &str) -> &'static str {
        if self.set_vars.contains(&name) {
            "environment"
        } else if self.file_vars.contains(&name) {
            "config file"
        } else {
            "default"
        }
    }

    /// Parses the engine's and the daemon's variables through `var`, with the cache in
    /// `cache_dir`.
    pub fn from_vars(
        cache_dir: Option<PathBuf>,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<DaemonConfig, ConfigError> {
        let get = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let engine = Config::from_vars(cache_dir, &var)?;
        let set_vars = VARIABLES
            .iter()
            .chain(DAEMON_VARIABLES)
            .map(|v| v.name)
            .filter(|name| get(name).is_some())
            .collect();
        let max_budget = match get("FITTOK_MAX_BUDGET") {
            None => 0,
            Some(v) => v.trim().parse().map_err(|_| ConfigError {
                name: "FITTOK_MAX_BUDGET",
                value: v,
                expected: "expected a number of tokens (0 = no cap)",
            })?,
        };
        let defer_tests_over = match get("FITTOK_DEFER_TESTS_OVER") {
            None => DEFAULT_DEFER_TESTS_OVER,
            Some(v) => v.trim().parse().map_err(|_| ConfigError {
                name: "FITTOK_DEFER_TESTS_OVER",
                value: v,
                expected: "expected a number of bytes (0 = never)",
            })?,
        };
        let offline = get("HF_HUB_OFFLINE").is_some_and(|v| is_on(&v));
        let model_download = if engine.embed.model_dir.is_some() || offline {
            None
        } else {
            let endpoint = get("HF_ENDPOINT").unwrap_or_else(|| "https://huggingface.co".into());
            let revision = get("FITTOK_MODEL_REVISION").unwrap_or_else(|| "main".into());
            Some(ModelSource::minilm(&endpoint, &revision))
        };
        Ok(DaemonConfig {
            engine: Arc::new(engine),
            max_budget,
            defer_tests_over,
            model_download,
            no_download_note: offline
                .then(|| {
                "HF_HUB_OFFLINE is set, so it is not downloaded; scripts/fetch-model.sh fetches it without the hub".to_string()
            }),
            llm_api_key: get("FITTOK_LLM_API_KEY").or_else(|| get("OPENAI_API_KEY")),
            set_vars,
            file_vars: Vec::new(),
            file: ConfigFile::default(),
        })
    }

    /// Every setting as the wire reports it (see [`DaemonConfig::settings`]).
    pub fn wire_settings(&self) -> Vec<fittok_proto::v1::Setting> {
        self.settings()
            .into_iter()
            .map(|(name, value, matters)| fittok_proto::v1::Setting {
                name: name.into(),
                value,
                matters,
                from_env: self.set_vars.contains(&name),
                source: self.source_of(name).into(),
            })
            .collect()
    }

    /// The effective value of every variable, engine's first, with whether it matters.
    pub fn settings(&self) -> Vec<(&'static str, String, bool)> {
        let matters = |name: &str| {
            VARIABLES
                .iter()
                .chain(DAEMON_VARIABLES)
                .any(|v| v.name == name && v.matters)
        };
        let mut out: Vec<(&'static str, String, bool)> = self
            .engine
            .settings()
            .into_iter()
            .map(|(n, v)| (n, v, matters(n)))
            .collect();
        let source = self.model_download.as_ref();
        out.extend([
            ("FITTOK_MAX_BUDGET", self.max_budget.to_string(), true),
            (
                "FITTOK_DEFER_TESTS_OVER",
                self.defer_tests_over.to_string(),
                false,
            ),
            (
                "HF_ENDPOINT",
                source.map(|s| s.endpoint.clone()).unwrap_or_default(),
                false,
            ),
            (
                "HF_HUB_OFFLINE",
                if self.no_download_note.is_some() {
                    "1"
                } else {
                    ""
                }
                .to_string(),
                false,
            ),
            (
                "FITTOK_MODEL_REVISION",
                source.map(|s| s.revision.clone()).unwrap_or_default(),
                false,
            ),
            (
                "FITTOK_LLM_API_KEY",
                if self.llm_api_key.is_some() {
                    "set"
                } else {
                    ""
                }
                .to_string(),
                true,
            ),
        ]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_name_every_variable_once() {
        let c = DaemonConfig::from_vars(None, |_| None).unwrap();
        let names: Vec<&str> = c.settings().iter().map(|s| s.0).collect();
        let declared: Vec<&str> = VARIABLES
            .iter()
            .chain(DAEMON_VARIABLES)
            .map(|v| v.name)
            .collect();
        assert_eq!(names, declared);
    }

    #[test]
    fn a_key_is_reported_as_set_never_shown() {
        let c = DaemonConfig::from_vars(None, |k| {
            (k == "OPENAI_API_KEY").then(|| "sk-secret-value".to_string())
        })
        .unwrap();
        assert_eq!(c.llm_api_key.as_deref(), Some("sk-secret-value"));
        assert!(c.settings().iter().all(|s| !s.1.contains("sk-secret")));
    }

    #[test]
    fn a_named_model_or_offline_means_no_download() {
        let named = DaemonConfig::from_vars(None, |k| {
            (k == "FITTOK_EMBED_MODEL").then(|| "/m".to_string())
        })
        .unwrap();
        assert!(named.model_download.is_none());
        let offline =
            DaemonConfig::from_vars(None, |k| (k == "HF_HUB_OFFLINE").then(|| "1".to_string()))
                .unwrap();
        assert!(offline.model_download.is_none() && offline.no_download_note.is_some());
        let default = DaemonConfig::from_vars(None, |_| None).unwrap();
        assert!(default.model_download.is_some());
    }
}
