//! The service in process, over bytes: `fittokd call RPC` reads one request (protobuf) on
//! stdin and writes the replies on stdout, each length-delimited. This is what
//! `fittok --no-daemon` runs, so that a sandbox without background processes gets the same
//! requests, conversions, replies and errors as the daemon — only nothing stays resident.

use std::sync::Arc;

use fittok_proto::v1::fittok_server::Fittok;
use prost::Message;
use tokio_stream::StreamExt;
use tonic::{Request, Status};

use super::{Activity, FittokService, ServiceError, ServiceInfo};
use crate::resident::{ResidentOptions, Residents};

/// The calls that can run in process (the others are about a running daemon).
pub const RPCS: &[&str] = &[
    "query", "navigate", "expand", "index", "graph", "map", "fit",
];

/// A service with its own residents: no socket, no watcher, the cache when it is free.
pub fn service(mut opts: ResidentOptions, info: ServiceInfo) -> FittokService {
    opts.autowatch = false;
    // One call, then the process ends: there is no "right after" for deferred tests to arrive
    // in, and a build without them is never saved.
    opts.config.defer_tests_over = 0;
    let cache = opts.config.engine.cache_dir.clone();
    let store = cache.and_then(|c| fittok_engine::engine::open_store(&c));
    let residents = Residents::new(store, opts);
    let (shutdown, _) = tokio::sync::watch::channel(false);
    FittokService::new(residents, Arc::new(Activity::default()), info, shutdown)
}

fn decode<M: Message + Default>(bytes: &[u8]) -> Result<M, Status> {
    M::decode(bytes)
        .map_err(|e| ServiceError::BadRequest(format!("unreadable request on stdin: {e}")).status())
}

fn emit(out: &mut dyn std::io::Write, m: &impl Message) -> Result<(), Status> {
    out.write_all(&m.encode_length_delimited_to_vec())
        .and_then(|()| out.flush())
        .map_err(|e| ServiceError::Internal(format!("cannot write the reply: {e}")).status())
}

/// Runs `rpc` with the request in `input`, writing its replies to `out`.
pub async fn call(
    service: &FittokService,
    rpc: &str,
    input: &[u8],
    out: &mut dyn std::io::Write,
) -> Result<(), Status> {
    match rpc {
        "query" => emit(
            out,
            &service
                .query(Request::new(decode(input)?))
                .await?
                .into_inner(),
        ),
        "navigate" => emit(
            out,
            &service
                .navigate(Request::new(decode(input)?))
                .await?
                .into_inner(),
        ),
        "expand" => emit(
            out,
            &service
                .expand(Request::new(decode(input)?))
                .await?
                .into_inner(),
        ),
        "graph" => emit(
            out,
            &service
                .graph(Request::new(decode(input)?))
                .await?
                .into_inner(),
        ),
        "map" => emit(
            out,
            &service
                .map(Request::new(decode(input)?))
                .await?
                .into_inner(),
        ),
        "fit" => emit(
            out,
            &service
                .fit(Request::new(decode(input)?))
                .await?
                .into_inner(),
        ),
        "index" => {
            let mut stream = service
                .index(Request::new(decode(input)?))
                .await?
                .into_inner();
            while let Some(progress) = stream.next().await {
                emit(out, &progress?)?;
            }
            Ok(())
        }
        other => Err(ServiceError::BadRequest(format!(
            "no call {other:?} in process: one of {}",
            RPCS.join(", ")
        ))
        .status()),
    }
}
