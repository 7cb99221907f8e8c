//! A client's environment against the running daemon's configuration: the daemon behaves as
//! it was started, whoever calls it, so a setting that differs deserves a line.

use fittok_proto::v1::Setting;

/// `on`/`off` for the words both sides accept as booleans, else the text itself.
fn normal(v: &str) -> String {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => "on".into(),
        "0" | "false" | "no" | "off" => "off".into(),
        other => other.replace(' ', ""),
    }
}

/// Whether two values of a setting say the same: booleans by meaning, numbers by value
/// (`1` = `1.0`), lists item by item.
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (normal(a), normal(b));
    if a == b {
        return true;
    }
    let items = |s: &str| -> Option<Vec<f64>> { s.split(',').map(|x| x.parse().ok()).collect() };
    matches!((items(&a), items(&b)), (Some(x), Some(y)) if x == y)
}

/// Lines for the settings that matter where `var` (the caller's environment) disagrees with
/// the daemon: a variable set here with another value, or set for the daemon and not here.
/// Keys compare by presence only (the daemon never reports one).
pub fn differences(settings: &[Setting], var: impl Fn(&str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    for s in settings.iter().filter(|s| s.matters) {
        let here = var(&s.name).filter(|v| !v.trim().is_empty());
        let secret = s.name.ends_with("_KEY");
        let differs = match &here {
            Some(_) if secret => s.value.is_empty(),
            Some(v) => !same(v, &s.value),
            None if secret => !s.value.is_empty(),
            None => s.from_env,
        };
        if !differs {
            continue;
        }
        let daemon = if s.value.is_empty() {
            "unset".to_string()
        } else if secret {
            "set".to_string()
        } else {
            s.value.clone()
        };
        let shell = match &here {
            Some(_) if secret => "set".to_string(),
            Some(v) => v.clone(),
            None => "unset".to_string(),
        };
        out.push(format!(
            "{}: the running daemon has {daemon}, this environment {shell}; `fittok daemon restart` applies this environment's",
            s.name
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(name: &str, value: &str, from_env: bool) -> Setting {
        Setting {
            name: name.into(),
            value: value.into(),
            matters: true,
            from_env,
            source: if from_env { "environment" } else { "default" }.into(),
        }
    }

    #[test]
    fn only_real_differences_are_named() {
        let daemon = [
            setting("FITTOK_SCRUB", "on", false),
            setting("FITTOK_RANK_WEIGHTS", "1,1,1,0.3,1,1,0", false),
            setting("FITTOK_MAX_BUDGET", "6000", true),
            setting("FITTOK_LLM_API_KEY", "", false),
        ];
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        // Same meaning in other words: nothing to say.
        let quiet = differences(
            &daemon,
            env(&[
                ("FITTOK_SCRUB", "true"),
                ("FITTOK_RANK_WEIGHTS", "1.0, 1, 1, 0.30, 1, 1, 0"),
                ("FITTOK_MAX_BUDGET", "6000"),
            ]),
        );
        assert!(quiet.is_empty(), "{quiet:?}");
        let loud = differences(
            &daemon,
            env(&[("FITTOK_SCRUB", "off"), ("FITTOK_LLM_API_KEY", "sk-1")]),
        );
        let names: Vec<&str> = loud
            .iter()
            .map(|l| l.split(':').next().unwrap_or_default())
            .collect();
        assert_eq!(
            names,
            ["FITTOK_SCRUB", "FITTOK_MAX_BUDGET", "FITTOK_LLM_API_KEY"]
        );
        assert!(loud.iter().all(|l| !l.contains("sk-1")), "{loud:?}");
    }
}
