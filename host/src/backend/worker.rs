//! The backends' client thread: one thread with its own tokio runtime runs
//! every request, so that blocking callers (plugins run on blocking
//! threads, the CLI on its main thread) can wait for an answer from
//! anywhere, many at once, and drop a backend from anywhere.

use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc;

type Job = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A thread running futures on its own runtime; [`Worker::run`] waits for
/// one. Dropping the worker ends the thread.
#[derive(Debug)]
pub(crate) struct Worker {
    jobs: tokio::sync::mpsc::UnboundedSender<Job>,
}

/// What a caller hears when the thread is gone.
const GONE: &str = "the backend's client thread is gone";

impl Worker {
    /// Starts the thread, named `assay-NAME`.
    pub(crate) fn start(name: &str) -> Result<Worker, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the {name} client's runtime: {e}"))?;
        let (jobs, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Job>();
        std::thread::Builder::new()
            .name(format!("assay-{name}"))
            .spawn(move || {
                runtime.block_on(async move {
                    while let Some(job) = receiver.recv().await {
                        tokio::spawn(job);
                    }
                });
            })
            .map_err(|e| format!("cannot start the {name} client's thread: {e}"))?;
        Ok(Worker { jobs })
    }

    /// Runs `future` on the thread and waits for its output. Many callers
    /// may wait at once: their futures run concurrently.
    pub(crate) fn run<T: Send + 'static>(&self, future: impl Future<Output = T> + Send + 'static) -> Result<T, String> {
        let (reply, answer) = mpsc::sync_channel(1);
        let job: Job = Box::pin(async move {
            let _ = reply.send(future.await);
        });
        self.jobs.send(job).map_err(|_| GONE.to_owned())?;
        answer.recv().map_err(|_| GONE.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn runs_futures_from_many_threads_at_once() {
        let worker = std::sync::Arc::new(Worker::start("test").unwrap());
        let started = Instant::now();
        let waiters: Vec<_> = (0..8)
            .map(|i| {
                let worker = worker.clone();
                std::thread::spawn(move || {
                    worker
                        .run(async move {
                            tokio::time::sleep(Duration::from_millis(200)).await;
                            i * 2
                        })
                        .unwrap()
                })
            })
            .collect();
        let answers: Vec<i32> = waiters.into_iter().map(|w| w.join().unwrap()).collect();
        assert_eq!(answers, [0, 2, 4, 6, 8, 10, 12, 14]);
        // Eight 200 ms sleeps in sequence would take 1.6 s.
        assert!(started.elapsed() < Duration::from_millis(1500), "{:?}", started.elapsed());
    }
}
