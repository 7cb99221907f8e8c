//! The embedding model of the resident set: found on disk, downloaded on first use, loaded
//! once, and given to every resident snapshot when it arrives.
//!
//! A model that appears on disk while the daemon runs — its download finished, or a user
//! installed it (`scripts/fetch-model.sh`) after a download failed — is picked up by the next
//! call that needs it: nothing waits for a restart. Only a model that was found and could not
//! be loaded is remembered as failed, and only until its files change.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use fittok_engine::embed::{Embedder, model_dir};

use super::Residents;

/// The model download's state.
pub(super) enum Download {
    NotStarted,
    Running(Arc<crate::download::Progress>),
    Failed(String),
}

impl Residents {
    /// Where the model is on disk, if it is.
    pub(super) fn model_dir(&self) -> Result<std::path::PathBuf, fittok_engine::embed::EmbedError> {
        let engine = &self.opts.config.engine;
        model_dir(&engine.embed, engine.cache_dir.as_deref())
    }

    /// Attaches the model to `engine`, whose missing vectors the background embedder then
    /// fills (answers say so); `Err(why)` when there is no model.
    pub(super) fn attach_model(&self, engine: &mut fittok_engine::Engine) -> Result<(), String> {
        engine.attach_semantic(self.model()?);
        engine
            .semantic
            .set_pending_hint("embedding in the background");
        Ok(())
    }

    /// The loaded model, or why there is none, in one line. Loaded on first need; when it is not
    /// on disk and a download source is set, fetched in the background first (answers are
    /// lexical meanwhile, and say so).
    pub fn model(&self) -> Result<Arc<Embedder>, String> {
        if let Some(model) = self.model.get() {
            return Ok(model.clone());
        }
        if !self.opts.semantic {
            return Err("semantic ranking off".into());
        }
        let dir = match self.model_dir() {
            Ok(dir) => dir,
            Err(e) => {
                return Err(
                    match (
                        &self.opts.config.model_download,
                        &self.opts.config.no_download_note,
                    ) {
                        (Some(source), _) => self.downloading(source),
                        (None, Some(note)) => format!("{e} ({note})"),
                        (None, None) => e.to_string(),
                    },
                );
            }
        };
        let stamp = std::fs::metadata(dir.join("model.safetensors"))
            .and_then(|m| m.modified())
            .ok();
        let mut failed = self.model_failed.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((when, why)) = &*failed
            && *when == stamp
        {
            return Err(why.clone());
        }
        let t = Instant::now();
        match Embedder::load(&dir, &self.opts.config.engine.embed) {
            Ok(model) => {
                tracing::info!(ms = t.elapsed().as_millis() as u64, "model loaded");
                // Batches are background work: the embedder's own thread waits at idle
                // priority while the batch threads compute, so they must be idle too.
                model.on_batch_threads(super::embedder::lower_priority);
                *failed = None;
                drop(failed);
                // A failed or running download is moot once the model is here.
                if let Ok(mut d) = self.download.lock()
                    && matches!(*d, Download::Failed(_))
                {
                    *d = Download::NotStarted;
                }
                Ok(self.model.get_or_init(|| Arc::new(model)).clone())
            }
            Err(e) => {
                tracing::warn!(error = %e, "semantic ranking unavailable");
                let why = e.to_string();
                *failed = Some((stamp, why.clone()));
                Err(why)
            }
        }
    }

    /// A snapshot built without the model, once the model is on disk: the model is loaded and
    /// the snapshot's successor has it (`None` when there is still no model to give).
    pub(super) fn model_arrived(
        &self,
        resident: &Arc<super::Resident>,
        engine: &Arc<fittok_engine::engine::Engine>,
    ) -> Option<Arc<fittok_engine::engine::Engine>> {
        if engine.semantic.has_model()
            || engine.semantic.is_deferred()
            || !self.opts.semantic
            || self.model_dir().is_err()
        {
            return None;
        }
        self.model().ok()?;
        let _building = resident.building.lock().unwrap_or_else(|p| p.into_inner());
        let current = resident.snapshot().unwrap_or_else(|| engine.clone());
        if current.semantic.has_model() {
            return Some(current);
        }
        match self.apply(resident, &current, Default::default()) {
            Ok(next) => Some(next),
            Err(e) => {
                tracing::warn!(error = %e, "cannot attach the model to a resident");
                None
            }
        }
    }

    /// Starts the model download if it has not started, and says how it goes.
    fn downloading(&self, source: &crate::download::ModelSource) -> String {
        let Ok(mut state) = self.download.lock() else {
            return "model download state poisoned".into();
        };
        match &*state {
            Download::Running(p) => {
                return format!("downloading the embedding model ({})", p.describe());
            }
            Download::Failed(why) => return download_failed(why),
            Download::NotStarted => {}
        }
        let progress = Arc::new(crate::download::Progress::default());
        *state = Download::Running(progress.clone());
        let Some(cache) = self.opts.config.engine.cache_dir.clone() else {
            *state = Download::Failed("no cache directory to download into".into());
            return download_failed("no cache directory to download into");
        };
        let dest = cache.join("models").join("all-MiniLM-L6-v2");
        let source = source.clone();
        let me = self.me.clone();
        let spawned = std::thread::Builder::new()
            .name("fittok-model-download".into())
            .spawn(move || {
                tracing::info!(from = %source.endpoint, to = %dest.display(), "downloading the embedding model");
                let result = crate::download::fetch(&source, &dest, &progress);
                let Some(r) = me.upgrade() else { return };
                match result {
                    Ok(()) => {
                        tracing::info!("embedding model downloaded");
                        if let Ok(mut s) = r.download.lock() {
                            *s = Download::NotStarted;
                        }
                        r.attach_model_to_residents();
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "embedding model download failed");
                        if let Ok(mut s) = r.download.lock() {
                            *s = Download::Failed(e.to_string());
                        }
                    }
                }
            });
        if let Err(e) = spawned {
            *state = Download::Failed(e.to_string());
        }
        "downloading the embedding model (starting)".into()
    }

    /// Once the model is on disk: loads it and gives every resident snapshot its semantics.
    fn attach_model_to_residents(&self) {
        if self.model().is_err() {
            return;
        }
        for resident in self.list() {
            if let Some(current) = resident.snapshot() {
                self.model_arrived(&resident, &current);
            }
        }
    }

    /// Why an engine built without semantics has none *now* (its own note was written when it
    /// was built, perhaps while the model was still downloading).
    pub fn semantic_note_now(&self) -> Option<String> {
        match &self.opts.config.model_download {
            Some(source) if self.model.get().is_none() && self.model_dir().is_err() => {
                Some(self.downloading(source))
            }
            _ => None,
        }
    }

    /// (bytes done, bytes in all) while the model downloads.
    pub fn download_progress(&self) -> Option<(u64, u64)> {
        match self.download.lock().as_deref() {
            Ok(Download::Running(p)) => Some((
                p.done.load(Ordering::Relaxed),
                p.total.load(Ordering::Relaxed),
            )),
            _ => None,
        }
    }

    /// How the model download goes, for `status` ("" when there is nothing to say, and once
    /// the model is loaded, whatever the download did).
    /// Bytes the loaded model's weights take (0 before it loads).
    pub fn model_bytes(&self) -> usize {
        self.model.get().map_or(0, |m| m.weight_bytes())
    }

    pub fn model_note(&self) -> String {
        if self.model.get().is_some() {
            return String::new();
        }
        match self.download.lock().as_deref() {
            Ok(Download::Running(p)) => {
                format!("downloading the embedding model: {}", p.describe())
            }
            Ok(Download::Failed(why)) => download_failed(why),
            _ => String::new(),
        }
    }
}

/// A failed download in one line, with the way out that needs no restart.
fn download_failed(why: &str) -> String {
    format!(
        "embedding model download failed: {why}; scripts/fetch-model.sh installs it (picked up \
         at the next question)"
    )
}
