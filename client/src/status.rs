//! `fittok status`: the daemon's state, configuration and resident repositories. The JSON is
//! the reply message itself (serialised by its derive), so it never drifts from the proto.

use fittok_connect::v1::{StatusReply, StatusRequest};
use fittok_connect::{ClientError, DaemonOptions, EXIT_DAEMON};

use crate::Failure;

async fn status(opts: &DaemonOptions) -> Result<StatusReply, Failure> {
    let mut client = match fittok_connect::hello(&opts.socket, "fittok").await {
        Ok((c, _)) => c,
        Err(e @ ClientError::NotRunning { .. }) => {
            return Err(Failure::new(EXIT_DAEMON, format!("{e} (not running)")));
        }
        Err(e) => return Err(Failure::new(EXIT_DAEMON, e.to_string())),
    };
    Ok(client.status(StatusRequest {}).await?.into_inner())
}

/// `fittok config`: every setting of the running daemon, its value and its source.
pub async fn config(opts: &DaemonOptions, json: bool) -> Result<(), Failure> {
    let s = status(opts).await?;
    if json {
        let v = serde_json::json!({
            "config_file": s.config_file,
            "settings": s.settings,
        });
        crate::print_out(&serde_json::to_string_pretty(&v).unwrap_or_default());
        return Ok(());
    }
    let exists = std::path::Path::new(&s.config_file).is_file();
    let mut out = format!(
        "config file {} ({})\nkeys in the file are the names below without `FITTOK_`, in lower case; the environment overrides the file\n\n",
        s.config_file,
        if exists { "read" } else { "none there" }
    );
    let width = s.settings.iter().map(|v| v.name.len()).max().unwrap_or(0);
    for v in &s.settings {
        out.push_str(&format!(
            "{:width$}  {:<12}  {}\n",
            v.name,
            v.source,
            if v.value.is_empty() {
                "(unset)"
            } else {
                &v.value
            },
        ));
    }
    crate::print_out(&out);
    Ok(())
}

pub async fn run(opts: &DaemonOptions, json: bool) -> Result<(), Failure> {
    let s = status(opts).await?;
    let notes = fittok_connect::settings::differences(&s.settings, crate::env_var);
    if json {
        let text = serde_json::to_string_pretty(&s)
            .map_err(|e| Failure::new(1, format!("status to JSON: {e}")))?;
        crate::print_out(&text);
    } else {
        crate::print_out(&text(&s));
    }
    for note in notes {
        eprintln!("fittok: note: {note}");
    }
    Ok(())
}

/// How long ago `ms` (Unix milliseconds) was; "never" for the zero of a time not yet set.
fn ago(ms: u64) -> String {
    if ms == 0 {
        return "never".into();
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    duration(now.saturating_sub(ms) / 1000) + " ago"
}

fn duration(secs: u64) -> String {
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {}s", s / 60, s % 60),
        s => format!("{}h {}m", s / 3600, s % 3600 / 60),
    }
}

/// `name 1.5 · name 0.2`: each part in MB with `decimals` decimals.
fn memory_parts(parts: &[fittok_connect::v1::MemoryPart], decimals: usize) -> String {
    let parts: Vec<String> = parts
        .iter()
        .map(|p| {
            format!(
                "{} {:.decimals$}",
                p.name,
                p.bytes as f64 / (1 << 20) as f64
            )
        })
        .collect();
    parts.join(" · ")
}

/// The status as a person reads it.
pub fn text(s: &StatusReply) -> String {
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    let mut out = format!(
        "fittokd {} (protocol {}), pid {}, up {}, RSS {:.0} MB (budget {:.0} MB), idle exit {}\nsocket {}\nlog    {}\n",
        s.version,
        s.protocol,
        s.pid,
        duration(s.uptime_ms / 1000),
        mb(s.rss_bytes),
        mb(s.memory_budget_bytes),
        if s.idle_timeout_s == 0 {
            "never".to_string()
        } else {
            format!("after {}", duration(s.idle_timeout_s))
        },
        s.socket,
        s.log_path
    );
    if !s.process_memory.is_empty() {
        out.push_str(&format!(
            "memory (MB): {}\n",
            memory_parts(&s.process_memory, 0)
        ));
    }
    let from = |source: &str| -> Vec<String> {
        s.settings
            .iter()
            .filter(|v| v.source == source)
            .map(|v| format!("{}={}", v.name, v.value))
            .collect()
    };
    let (env, file) = (from("environment"), from("config file"));
    if !file.is_empty() {
        out.push_str(&format!("config {} ({})\n", s.config_file, file.join(" ")));
    }
    if !env.is_empty() {
        out.push_str(&format!("env    {}\n", env.join(" ")));
    }
    let failed: Vec<String> = s
        .grammars
        .iter()
        .filter(|g| !g.error.is_empty())
        .map(|g| format!("{} ({})", g.language, g.error))
        .collect();
    out.push_str(&if failed.is_empty() {
        format!("grammars {} linked, all load\n", s.grammars.len())
    } else {
        format!(
            "grammars {} linked; not loading, so their files parse to nothing: {}\n",
            s.grammars.len(),
            failed.join(", ")
        )
    });
    for note in [&s.cache_note, &s.log_note, &s.model_note] {
        if !note.is_empty() {
            out.push_str(&format!("note   {note}\n"));
        }
    }
    if s.repos.is_empty() {
        out.push_str("no repositories resident\n");
    }
    for r in &s.repos {
        if r.left_memory_at_ms > 0 {
            out.push_str(&format!(
                "{}\n  {} · left memory {} for the memory budget · {} files · {} nodes · indexed {} · the next question loads it from the cache\n",
                r.path,
                r.state,
                ago(r.left_memory_at_ms),
                r.files,
                r.nodes,
                ago(r.indexed_at_ms),
            ));
            continue;
        }
        out.push_str(&format!(
            "{}\n  {} · {} files · {} nodes · {} edges · semantic {:.0}% (priority set {:.0}%) · {} · indexed {} · ~{:.0} MB\n",
            r.path,
            r.state,
            r.files,
            r.nodes,
            r.edges,
            r.semantic_coverage * 100.0,
            r.semantic_priority_coverage * 100.0,
            r.freshness,
            ago(r.indexed_at_ms),
            mb(r.memory_bytes)
        ));
        out.push_str(&format!(
            "  {} · {} updates, last {} · {} pending files · {} vectors embedded here\n",
            if r.watching {
                "watching".to_string()
            } else {
                format!("not watching ({})", r.watch_note)
            },
            r.updates,
            ago(r.updated_at_ms),
            r.pending_files,
            r.vectors_embedded
        ));
        if !r.memory.is_empty() {
            out.push_str(&format!("  memory (MB): {}\n", memory_parts(&r.memory, 1)));
        }
        if !r.semantic_note.is_empty() {
            out.push_str(&format!("  {}\n", r.semantic_note));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_time_never_set_is_never_and_a_real_one_is_ago() {
        assert_eq!(super::ago(0), "never");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        assert_eq!(super::ago(now - 90_000), "1m 30s ago");
    }
}
