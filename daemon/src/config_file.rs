//! The daemon's configuration file (`fittok_proto::paths::config_file`): TOML, one key per
//! setting, named like its environment variable without the `FITTOK_` prefix and in lower
//! case (`max_budget = 8000`, `memory_budget_mb = 1024`, `hf_endpoint = "http://…"`). An
//! environment variable overrides the file's value; a missing file is no file. A key that
//! names no setting, or a value that is a table or an array, is an error naming the file and
//! the key: a typo must not be a silently ignored setting.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A configuration file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is not valid TOML: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("{path}: `{key}` is not a setting (known: {known})")]
    Unknown {
        path: PathBuf,
        key: String,
        known: String,
    },
    #[error("{path}: `{key}` must be a string, a number or true/false")]
    Shape { path: PathBuf, key: String },
}

/// The settings a file gave, by environment-variable name.
#[derive(Debug, Clone, Default)]
pub struct ConfigFile {
    pub path: PathBuf,
    values: BTreeMap<&'static str, String>,
}

/// `FITTOK_MAX_BUDGET` → `max_budget`; `HF_ENDPOINT` → `hf_endpoint`.
pub fn key_of(variable: &str) -> String {
    variable
        .strip_prefix("FITTOK_")
        .unwrap_or(variable)
        .to_ascii_lowercase()
}

impl ConfigFile {
    /// Reads `path` (absent: an empty file) against the settings `known` (variable names).
    pub fn read(path: &Path, known: &[&'static str]) -> Result<ConfigFile, ConfigFileError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(ConfigFile {
                    path: path.to_path_buf(),
                    values: BTreeMap::new(),
                });
            }
            Err(source) => {
                return Err(ConfigFileError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        ConfigFile::parse(path, &text, known)
    }

    pub fn parse(
        path: &Path,
        text: &str,
        known: &[&'static str],
    ) -> Result<ConfigFile, ConfigFileError> {
        let table: toml::Table =
            text.parse()
                .map_err(|e: toml::de::Error| ConfigFileError::Syntax {
                    path: path.to_path_buf(),
                    message: e.message().to_string(),
                })?;
        let mut values = BTreeMap::new();
        for (key, value) in table {
            let Some(&variable) = known.iter().find(|v| key_of(v) == key) else {
                return Err(ConfigFileError::Unknown {
                    path: path.to_path_buf(),
                    known: known
                        .iter()
                        .map(|v| key_of(v))
                        .collect::<Vec<_>>()
                        .join(", "),
                    key,
                });
            };
            let text = match value {
                toml::Value::String(s) => s,
                toml::Value::Integer(n) => n.to_string(),
                toml::Value::Float(x) => x.to_string(),
                toml::Value::Boolean(b) => if b { "1" } else { "0" }.to_string(),
                _ => {
                    return Err(ConfigFileError::Shape {
                        path: path.to_path_buf(),
                        key,
                    });
                }
            };
            values.insert(variable, text);
        }
        Ok(ConfigFile {
            path: path.to_path_buf(),
            values,
        })
    }

    /// The file's value for `variable`.
    pub fn get(&self, variable: &str) -> Option<String> {
        self.values.get(variable).cloned()
    }

    /// Whether the file sets `variable`.
    pub fn sets(&self, variable: &str) -> bool {
        self.values.contains_key(variable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["FITTOK_MAX_BUDGET", "HF_ENDPOINT", "FITTOK_SCRUB"];

    #[test]
    fn keys_are_the_variables_without_prefix_in_lower_case() {
        let f = ConfigFile::parse(
            Path::new("c.toml"),
            "max_budget = 8000\nhf_endpoint = \"http://localhost:9\"\nscrub = false\n",
            KNOWN,
        )
        .unwrap();
        assert_eq!(f.get("FITTOK_MAX_BUDGET").as_deref(), Some("8000"));
        assert_eq!(f.get("HF_ENDPOINT").as_deref(), Some("http://localhost:9"));
        assert_eq!(f.get("FITTOK_SCRUB").as_deref(), Some("0"));
        assert!(!ConfigFile::default().sets("FITTOK_MAX_BUDGET"));
    }

    #[test]
    fn a_typo_a_table_or_bad_toml_is_an_error_naming_the_key() {
        let err = |text: &str| {
            ConfigFile::parse(Path::new("c.toml"), text, KNOWN)
                .unwrap_err()
                .to_string()
        };
        assert!(err("max_budgt = 1").contains("`max_budgt` is not a setting"));
        assert!(err("[max_budget]\nx = 1").contains("`max_budget` must be a string"));
        assert!(err("max_budget = ").contains("not valid TOML"));
    }

    #[test]
    fn a_missing_file_is_no_file() {
        let f = ConfigFile::read(Path::new("/nonexistent/fittok/config.toml"), KNOWN).unwrap();
        assert!(f.get("FITTOK_MAX_BUDGET").is_none());
    }
}
