//! The gRPC service: the only module that knows the wire types. It translates requests into
//! calls on [`Residents`] and engine snapshots, and answers into replies. CPU work runs on the
//! blocking pool so the runtime keeps accepting calls.

mod error;
pub mod fit;
pub mod local;
pub mod query;
pub mod server;
pub mod transport;

use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use fittok_proto::v1::fittok_server::Fittok;
use fittok_proto::v1::*;
use tokio::sync::mpsc;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::resident::{Need, Residents, now_ms};

/// What the lifecycle needs to know of the calls: when the last one ended, how many run.
#[derive(Default)]
pub struct Activity {
    pub last_call_ms: AtomicU64,
    pub in_flight: AtomicUsize,
}

/// Counts a call as in flight until dropped.
struct CallGuard(Arc<Activity>);

impl CallGuard {
    fn new(activity: &Arc<Activity>) -> CallGuard {
        activity.in_flight.fetch_add(1, Ordering::SeqCst);
        activity.last_call_ms.store(now_ms(), Ordering::SeqCst);
        CallGuard(activity.clone())
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.0.last_call_ms.store(now_ms(), Ordering::SeqCst);
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Settings the service reports and applies.
#[derive(Debug, Clone)]
pub struct ServiceInfo {
    pub version: String,
    pub socket: PathBuf,
    pub log_path: PathBuf,
    /// Why the log file is not written, if it is not.
    pub log_note: Option<String>,
    pub idle_timeout: Duration,
    /// Serving one call in process (`fittokd call`): every answer comes from a build made
    /// for it, so it is current, and nothing is watched because nothing stays.
    pub in_process: bool,
}

pub struct FittokService {
    residents: Arc<Residents>,
    activity: Arc<Activity>,
    info: ServiceInfo,
    started: Instant,
    shutdown: tokio::sync::watch::Sender<bool>,
}

impl FittokService {
    pub fn new(
        residents: Arc<Residents>,
        activity: Arc<Activity>,
        info: ServiceInfo,
        shutdown: tokio::sync::watch::Sender<bool>,
    ) -> FittokService {
        FittokService {
            residents,
            activity,
            info,
            started: Instant::now(),
            shutdown,
        }
    }
}

pub use error::ServiceError;

fn repo_path(repo: &str) -> Result<PathBuf, Status> {
    let path = PathBuf::from(repo);
    if repo.is_empty() || !path.is_absolute() {
        return Err(ServiceError::BadRequest(format!(
            "repository path must be absolute, got {repo:?}"
        ))
        .status());
    }
    Ok(path)
}

/// Runs `f` on the blocking pool with the snapshot of `path` that `need` asks for (built
/// first if not resident).
async fn with_engine<T: Send + 'static>(
    residents: Arc<Residents>,
    path: PathBuf,
    need: Need,
    f: impl FnOnce(Arc<crate::resident::Resident>, Arc<fittok_engine::Engine>) -> Result<T, Status>
    + Send
    + 'static,
) -> Result<T, Status> {
    tokio::task::spawn_blocking(move || {
        let _foreground = residents.foreground();
        let (resident, engine) = residents
            .ensure_for(&path, None, need)
            .map_err(|e| ServiceError::from(e).status())?;
        f(resident, engine)
    })
    .await
    .map_err(join_error)?
}

fn join_error(e: tokio::task::JoinError) -> Status {
    ServiceError::Internal(format!("request failed inside the daemon: {e}")).status()
}

/// Resident memory of this process, from /proc (0 where unavailable).
pub use crate::resident::rss_bytes;

type ProgressStream = Pin<Box<dyn Stream<Item = Result<IndexProgress, Status>> + Send>>;

#[tonic::async_trait]
impl Fittok for FittokService {
    async fn hello(&self, _req: Request<HelloRequest>) -> Result<Response<HelloReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        Ok(Response::new(HelloReply {
            protocol: fittok_proto::PROTOCOL,
            version: self.info.version.clone(),
            pid: std::process::id(),
            uptime_ms: self.started.elapsed().as_millis() as u64,
            log_path: self.info.log_path.display().to_string(),
            settings: self.residents.config().wire_settings(),
        }))
    }

    type IndexStream = ProgressStream;

    async fn index(
        &self,
        req: Request<IndexRequest>,
    ) -> Result<Response<Self::IndexStream>, Status> {
        let call = CallGuard::new(&self.activity);
        let req = req.into_inner();
        let path = repo_path(&req.repo)?;
        let (tx, rx) = mpsc::channel::<Result<IndexProgress, Status>>(64);
        let residents = self.residents.clone();
        tokio::task::spawn_blocking(move || {
            let _call = call;
            let send = |phase: &str, done: u64, total: u64, message: String| {
                let _ = tx.blocking_send(Ok(IndexProgress {
                    phase: phase.into(),
                    done,
                    total,
                    message,
                }));
            };
            let progress = |phase: fittok_engine::repo::Phase, done: usize, total: usize| {
                send(phase.name(), done as u64, total as u64, String::new());
            };
            let t = Instant::now();
            // A first build is foreground work; the wait for embedding below is not.
            let built = {
                let _foreground = residents.foreground();
                residents.ensure(&path, Some(&progress))
            };
            let (resident, engine) = match built {
                Ok(built) => built,
                Err(e) => {
                    let _ = tx.blocking_send(Err(ServiceError::from(e).status()));
                    return;
                }
            };
            let g = &engine.repo.graph;
            send(
                "ready",
                g.nodes.len() as u64,
                g.nodes.len() as u64,
                format!(
                    "{} files ({} from cache), {} nodes, {} edges; {} in {} ms",
                    g.files.len(),
                    engine.timings.reused,
                    g.nodes.len(),
                    g.edges.len(),
                    if engine.is_restored() {
                        "restored from the snapshot"
                    } else {
                        "lexical ranking ready"
                    },
                    t.elapsed().as_millis()
                ),
            );
            // A model still downloading (first use): its bytes are the bar, then the snapshot
            // that gained semantics when it landed is the one embedded.
            let mut engine = engine;
            if req.wait_semantic && !engine.semantic.has_model() {
                while let Some((done, total)) = residents.download_progress() {
                    if tx.is_closed() || residents.is_stopping() {
                        break;
                    }
                    send(
                        "model",
                        done,
                        total,
                        "downloading the embedding model".into(),
                    );
                    std::thread::sleep(Duration::from_millis(250));
                }
                let t = Instant::now();
                while t.elapsed() < Duration::from_secs(10) && residents.model().is_ok() {
                    let again = {
                        let _foreground = residents.foreground();
                        residents.ensure(&path, None)
                    };
                    match again {
                        Ok((_, next)) if next.semantic.has_model() => {
                            engine = next;
                            break;
                        }
                        _ => std::thread::sleep(Duration::from_millis(100)),
                    }
                }
            }
            while req.wait_semantic && engine.semantic.missing() > 0 {
                if tx.is_closed() || residents.is_stopping() {
                    break;
                }
                let (done, total) = engine.semantic.counts();
                send(
                    "embed",
                    done as u64,
                    total as u64,
                    format!("{} nodes to embed", total - done),
                );
                std::thread::sleep(Duration::from_millis(250));
            }
            // The last slice's vectors are visible a moment before the embedder counts them:
            // let it finish, so a `status` right after this reply sees the count.
            let t = Instant::now();
            while req.wait_semantic
                && resident.embedding_slice.load(Ordering::SeqCst)
                && t.elapsed() < Duration::from_secs(5)
            {
                std::thread::sleep(Duration::from_millis(10));
            }
            let note = engine.semantic.note().unwrap_or_else(|| {
                format!(
                    "semantic coverage {:.0}%",
                    engine.semantic.coverage() * 100.0
                )
            });
            let (done, total) = engine.semantic.counts();
            send("done", done as u64, total as u64, note);
        });
        Ok(Response::new(Box::pin(
            tokio_stream::wrappers::ReceiverStream::new(rx),
        )))
    }

    async fn query(&self, req: Request<QueryRequest>) -> Result<Response<QueryReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        let req = req.into_inner();
        let path = repo_path(&req.repo)?;
        let residents = self.residents.clone();
        let max_budget = self.residents.config().max_budget;
        let t = Instant::now();
        let residents_note = self.residents.semantic_note_now();
        let in_process = self.info.in_process;
        let need = query::need(&req.question);
        let reply = with_engine(residents, path, need, move |resident, engine| {
            let mut q = query::engine_query(&req, max_budget).map_err(ServiceError::status)?;
            if !in_process {
                q.freshness = Some(resident.freshness());
            }
            q.semantic_note = residents_note;
            query::reply(&engine, &q, req.json, t).map_err(ServiceError::status)
        })
        .await?;
        Ok(Response::new(reply))
    }

    async fn navigate(
        &self,
        req: Request<NavigateRequest>,
    ) -> Result<Response<QueryReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        let req = req.into_inner();
        let path = repo_path(&req.repo)?;
        let max_budget = self.residents.config().max_budget;
        let mut nav = query::engine_navigation(&req, max_budget).map_err(ServiceError::status)?;
        let t = Instant::now();
        let residents = self.residents.clone();
        let in_process = self.info.in_process;
        let reply = with_engine(
            residents,
            path,
            Need::Everything,
            move |resident, engine| {
                if !in_process {
                    nav.freshness = Some(resident.freshness());
                }
                let answer = engine
                    .navigate(&nav)
                    .map_err(|e| ServiceError::BadRequest(e.to_string()).status())?;
                query::answer_reply(&engine, answer, req.json, t).map_err(ServiceError::status)
            },
        )
        .await?;
        Ok(Response::new(reply))
    }

    async fn expand(&self, req: Request<ExpandRequest>) -> Result<Response<ExpandReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        let req = req.into_inner();
        let path = repo_path(&req.repo)?;
        if req.ids.is_empty() {
            return Err(ServiceError::BadRequest("no ids to expand".into()).status());
        }
        let residents = self.residents.clone();
        let text = with_engine(residents, path, Need::Everything, move |_, engine| {
            engine
                .expand(&req.ids)
                .map_err(|e| ServiceError::from(e).status())
        })
        .await?;
        Ok(Response::new(ExpandReply { text }))
    }

    async fn status(&self, _req: Request<StatusRequest>) -> Result<Response<StatusReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        let repos: Vec<RepoStatus> = self
            .residents
            .list()
            .into_iter()
            .map(|r| {
                let engine = r.snapshot();
                let g = engine.as_ref().map(|e| &e.repo.graph);
                let live = r.live_status();
                let memory: Vec<MemoryPart> = engine
                    .as_ref()
                    .map(|e| {
                        e.memory_use()
                            .into_iter()
                            .map(|p| MemoryPart {
                                name: p.name.to_string(),
                                bytes: p.bytes as u64,
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                RepoStatus {
                    path: r.root.display().to_string(),
                    // Each state in words: an entry without a snapshot is being built, or left
                    // memory (its cache stays on disk), or was never built.
                    state: if live.deleted {
                        "deleted"
                    } else if engine.is_some() {
                        "ready"
                    } else if r.is_indexing() {
                        "indexing"
                    } else if r.indexed_at_ms.load(Ordering::Relaxed) > 0 {
                        fittok_proto::STATE_ON_DISK_ONLY
                    } else {
                        "not indexed"
                    }
                    .into(),
                    watching: live.watching,
                    watch_note: live.note,
                    pending_files: live.pending_files as u64,
                    updates: r.updates.load(Ordering::Relaxed),
                    updated_at_ms: live.updated_at_ms,
                    vectors_embedded: r.embedded.load(Ordering::Relaxed),
                    files: g.map_or(0, |g| g.files.len() as u64),
                    nodes: g.map_or(0, |g| g.nodes.len() as u64),
                    edges: g.map_or(0, |g| g.edges.len() as u64),
                    semantic_coverage: engine.as_ref().map_or(0.0, |e| e.semantic.coverage()),
                    semantic_priority_coverage: engine
                        .as_ref()
                        .map_or(0.0, |e| e.semantic.priority_coverage()),
                    freshness: r.freshness(),
                    indexed_at_ms: r.indexed_at_ms.load(Ordering::Relaxed),
                    last_used_ms: r.last_used_ms.load(Ordering::Relaxed),
                    memory_bytes: memory.iter().map(|p| p.bytes).sum(),
                    memory,
                    semantic_note: engine
                        .as_ref()
                        .and_then(|e| e.semantic.note())
                        .unwrap_or_default(),
                    left_memory_at_ms: 0,
                }
            })
            .chain(
                self.residents
                    .on_disk_only()
                    .into_iter()
                    .map(|l| RepoStatus {
                        path: l.root.display().to_string(),
                        state: fittok_proto::STATE_ON_DISK_ONLY.into(),
                        files: l.files as u64,
                        nodes: l.nodes as u64,
                        edges: l.edges as u64,
                        indexed_at_ms: l.indexed_at_ms,
                        last_used_ms: l.last_used_ms,
                        left_memory_at_ms: l.at_ms,
                        freshness: "in the cache on disk".into(),
                        ..RepoStatus::default()
                    }),
            )
            .collect();
        let rss = rss_bytes();
        let structures: u64 = repos.iter().map(|r| r.memory_bytes).sum();
        let model = self.residents.model_bytes() as u64;
        let process_memory = vec![
            MemoryPart {
                name: "repositories".into(),
                bytes: structures,
            },
            MemoryPart {
                name: "embedding model".into(),
                bytes: model,
            },
            MemoryPart {
                name: "rest of the process".into(),
                bytes: rss.saturating_sub(structures + model),
            },
        ];
        Ok(Response::new(StatusReply {
            process_memory,
            version: self.info.version.clone(),
            protocol: fittok_proto::PROTOCOL,
            pid: std::process::id(),
            uptime_ms: self.started.elapsed().as_millis() as u64,
            rss_bytes: rss,
            memory_budget_bytes: self.residents.memory_budget() as u64,
            idle_timeout_s: self.info.idle_timeout.as_secs(),
            socket: self.info.socket.display().to_string(),
            log_path: self.info.log_path.display().to_string(),
            repos,
            cache_note: self.residents.cache_note().unwrap_or_default(),
            log_note: self.info.log_note.clone().unwrap_or_default(),
            model_note: self.residents.model_note(),
            grammars: fittok_engine::parse::grammar_status()
                .into_iter()
                .map(|(lang, loaded)| fittok_proto::v1::GrammarStatus {
                    language: lang.name().to_string(),
                    error: loaded.err().unwrap_or_default(),
                })
                .collect(),
            config_file: self.residents.config().file.path.display().to_string(),
            settings: self.residents.config().wire_settings(),
        }))
    }

    async fn graph(&self, req: Request<GraphRequest>) -> Result<Response<GraphReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        let req = req.into_inner();
        let path = repo_path(&req.repo)?;
        let residents = self.residents.clone();
        let reply = with_engine(residents, path, Need::Everything, move |_, engine| {
            let html = engine.graph_page(Some(req.query.as_str()));
            Ok::<_, Status>(GraphReply {
                html,
                nodes: engine.repo.graph.nodes.len() as u64,
            })
        })
        .await?;
        Ok(Response::new(reply))
    }

    async fn map(&self, req: Request<MapRequest>) -> Result<Response<MapReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        let req = req.into_inner();
        let path = repo_path(&req.repo)?;
        let residents = self.residents.clone();
        let reply = with_engine(residents, path, Need::Everything, move |_, engine| {
            let markdown = engine.codebase_map();
            if req.fit_dir.is_empty() {
                return Ok(MapReply {
                    markdown,
                    files: Vec::new(),
                });
            }
            let files = fit::write_map(&markdown, &req).map_err(ServiceError::status)?;
            Ok::<_, Status>(MapReply {
                markdown: String::new(),
                files,
            })
        })
        .await?;
        Ok(Response::new(reply))
    }

    async fn fit(&self, req: Request<FitRequest>) -> Result<Response<FitReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        let req = req.into_inner();
        let key = self.residents.config().llm_api_key.clone();
        let reply = tokio::task::spawn_blocking(move || fit::run(&req, key.as_deref()))
            .await
            .map_err(join_error)?
            .map_err(ServiceError::status)?;
        Ok(Response::new(reply))
    }

    async fn forget(&self, req: Request<ForgetRequest>) -> Result<Response<ForgetReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        let path = repo_path(&req.into_inner().repo)?;
        Ok(Response::new(ForgetReply {
            forgotten: self.residents.forget(&path),
        }))
    }

    async fn shutdown(
        &self,
        req: Request<ShutdownRequest>,
    ) -> Result<Response<ShutdownReply>, Status> {
        let _call = CallGuard::new(&self.activity);
        tracing::info!(
            handover = req.into_inner().handover,
            "shutdown requested by a client"
        );
        let _ = self.shutdown.send(true);
        Ok(Response::new(ShutdownReply {}))
    }
}
