//! Commands that run another fittok binary in this one's place: `scrub` (`fittokd scrub`) and
//! `mcp` (`fittok-mcp`).

use std::path::PathBuf;

use fittok_connect::DaemonOptions;

use crate::Failure;

/// `fittok scrub FILES`: `fittokd scrub` in process; exit status 1 when a secret is found.
pub fn scrub(files: &[PathBuf], opts: &DaemonOptions) -> Result<(), Failure> {
    let status = std::process::Command::new(&opts.bin)
        .arg("scrub")
        .args(files)
        .status()
        .map_err(|e| {
            Failure::new(
                fittok_connect::EXIT_DAEMON,
                format!("cannot run {}: {e}", opts.bin.display()),
            )
        })?;
    match status.code() {
        Some(0) => Ok(()),
        Some(1) => Err(Failure::new(1, "secrets found")),
        // A file could not be read; `fittokd` said which.
        Some(code) => Err(Failure::new(code, String::new())),
        None => Err(Failure::new(1, "fittokd scrub was killed")),
    }
}

/// `fittok mcp`: the MCP server beside this binary (or on PATH).
pub fn mcp() -> Result<(), Failure> {
    let name = format!("fittok-mcp{}", std::env::consts::EXE_SUFFIX);
    let bin = std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(&name)))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| name.into());
    let status = std::process::Command::new(&bin)
        .status()
        .map_err(|e| Failure::new(1, format!("cannot run {}: {e}", bin.display())))?;
    if !status.success() {
        return Err(Failure::new(
            status.code().unwrap_or(1),
            "fittok-mcp failed",
        ));
    }
    Ok(())
}
