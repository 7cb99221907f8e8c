//! The local transport a client dials, through interprocess: a Unix domain socket, or on
//! Windows a named pipe (`\\.\pipe\…`; compile-checked here, not run; see README).

use std::io;
use std::path::Path;

use interprocess::local_socket::tokio::prelude::*;
use interprocess::local_socket::{ConnectOptions, GenericFilePath};

/// A connected stream to the daemon.
pub type LocalStream = interprocess::local_socket::tokio::Stream;

/// Opens a connection to the daemon's socket (or pipe) at `path`. On Windows, all pipe
/// instances busy is not a refusal: the daemon creates the next instance right after each
/// accept, so the connect waits for one (bounded by the caller's timeouts).
pub async fn dial(path: &Path) -> io::Result<LocalStream> {
    let name = path.to_fs_name::<GenericFilePath>()?;
    ConnectOptions::new()
        .name(name)
        .wait_mode(interprocess::ConnectWaitMode::Timeout(
            std::time::Duration::from_secs(2),
        ))
        .connect_tokio()
        .await
}
