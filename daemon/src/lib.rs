//! fittok's daemon: the engine kept resident behind gRPC on a local socket.
//!
//! [`resident`] keeps one engine per repository fresh ([`watch`] feeds it saves) and embeds in
//! the background; [`service`] serves the wire contract of `fittok-proto` over a Unix socket or
//! a named pipe; [`download`] fetches the embedding model on first use.
//!
//! API boundary: everything the engine does is reached through `fittok-engine`; this crate
//! adds the async runtime, the transport, file watching and the network. Configuration comes
//! in as [`config::DaemonConfig`], built once by `fittokd`.

pub mod config;
pub mod config_file;
pub mod download;
pub mod resident;
pub mod service;
pub mod watch;
