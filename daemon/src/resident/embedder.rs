//! Background embedding: one thread at idle CPU priority embeds what the cache did not have,
//! repository by repository, in small slices that stop when the daemon does.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use fittok_engine::engine::Engine;

use super::budget::release_free_memory;
use super::{Resident, Residents};

impl Residents {
    /// Whether the background embedder is working right now.
    pub fn is_embedding(&self) -> bool {
        self.embedding.load(Ordering::Relaxed)
    }

    /// Marks foreground work (an answer, a first build, an update) until the guard drops:
    /// background embedding finishes its batch and waits.
    pub fn foreground(&self) -> Foreground {
        self.foreground.fetch_add(1, Ordering::SeqCst);
        Foreground(self.foreground.clone())
    }

    /// Hands a snapshot with nodes lacking vectors to the background embedder.
    pub(super) fn queue_embedding(&self, resident: &Arc<Resident>, engine: &Engine) {
        if engine.semantic.missing() > 0
            && let Ok(tx) = self.embed_queue.lock()
        {
            let _ = tx.send(resident.clone());
        }
    }
}

/// Foreground work under way (see [`Residents::foreground`]).
pub struct Foreground(Arc<AtomicUsize>);

impl Drop for Foreground {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How often a waiting embedder looks whether the foreground is done.
const GIVE_WAY_POLL: Duration = Duration::from_millis(5);

/// Puts the calling thread at idle CPU priority, so background work (embedding, reading
/// history) runs only when nothing else wants the core: Linux `SCHED_IDLE`, and nice 19 where
/// that is refused.
pub(super) fn lower_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain syscalls on the calling thread (pid 0 and the thread's own id name it);
    // failure only leaves the priority as it was.
    unsafe {
        let param = libc::sched_param { sched_priority: 0 };
        if libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) != 0 {
            let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
            libc::setpriority(libc::PRIO_PROCESS, tid, 19);
        }
    }
    #[cfg(windows)]
    // SAFETY: the pseudo-handle of the calling thread; failure leaves the priority as it was.
    unsafe {
        use windows_sys::Win32::System::Threading::{
            GetCurrentThread, SetThreadPriority, THREAD_PRIORITY_BELOW_NORMAL,
        };
        SetThreadPriority(GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL);
    }
}

/// The background embedder: one repository at a time, in slices of a few seconds so a newer
/// snapshot or a forgotten repository is noticed quickly.
pub(super) fn embed_loop(
    rx: mpsc::Receiver<Arc<Resident>>,
    busy: Arc<AtomicBool>,
    foreground: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
) {
    let waiting = || foreground.load(Ordering::SeqCst) > 0;
    lower_priority();
    while let Ok(resident) = rx.recv() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        busy.store(true, Ordering::Relaxed);
        let t = Instant::now();
        let mut embedded = 0;
        loop {
            // Held only for a slice: a snapshot replaced meanwhile gets its own turn.
            let Some(engine) = resident.snapshot() else {
                break;
            };
            if engine.semantic.missing() == 0 || stop.load(Ordering::SeqCst) {
                break;
            }
            // Idle priority gives the cores to the foreground, but not the memory bandwidth or
            // the caches a batch fills: between batches the embedder waits while any answer,
            // build or update runs.
            while waiting() && !stop.load(Ordering::SeqCst) {
                std::thread::sleep(GIVE_WAY_POLL);
            }
            resident.embedding_slice.store(true, Ordering::SeqCst);
            let filled =
                engine.fill_semantic(Some(Instant::now() + Duration::from_secs(2)), &waiting);
            if let Ok(n) = filled {
                embedded += n;
                resident.embedded.fetch_add(n as u64, Ordering::SeqCst);
            }
            resident.embedding_slice.store(false, Ordering::SeqCst);
            match filled {
                Ok(_) => {}
                Err(e) => {
                    tracing::warn!(repo = %resident.root.display(), error = %e, "embedding failed");
                    break;
                }
            }
            // Dropped from the resident set: stop working for it.
            if Arc::strong_count(&resident) <= 1 {
                break;
            }
        }
        tracing::info!(
            repo = %resident.root.display(),
            embedded,
            secs = t.elapsed().as_secs_f32(),
            "background embedding finished"
        );
        release_free_memory();
        busy.store(false, Ordering::Relaxed);
    }
}
