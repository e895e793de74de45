//! A small worker pool: run independent jobs on `-j N` threads.
//!
//! Results are handed back tagged with their job index ([`for_each_result`],
//! so the caller can record each one as soon as it is done) or collected in
//! job order ([`map_ordered`]); either way what the caller ends up with does
//! not depend on N or on which job finished first.
//!
//! The jobs themselves are expected to isolate untrusted code (the device
//! runs kernels in worker processes); a panic inside `work` is a bug of the
//! caller and is propagated once every thread has stopped.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::sync::Mutex;

/// Runs `work` on every job with at most `threads` threads (0 counts as 1)
/// and calls `done(index, result)` on the calling thread as each job
/// finishes, in completion order.
pub fn for_each_result<J, R, W, D>(jobs: Vec<J>, threads: usize, work: W, mut done: D)
where
    J: Send,
    R: Send,
    W: Fn(J) -> R + Sync,
    D: FnMut(usize, R),
{
    let n_jobs = jobs.len();
    let n_threads = threads.clamp(1, n_jobs.max(1));
    if n_threads == 1 {
        for (idx, job) in jobs.into_iter().enumerate() {
            done(idx, work(job));
        }
        return;
    }
    let queue: Mutex<VecDeque<(usize, J)>> = Mutex::new(jobs.into_iter().enumerate().collect());
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    std::thread::scope(|scope| {
        for _ in 0..n_threads {
            let tx = tx.clone();
            let queue = &queue;
            let work = &work;
            scope.spawn(move || loop {
                // A poisoned lock means another worker panicked; stop.
                let next = match queue.lock() {
                    Ok(mut q) => q.pop_front(),
                    Err(_) => None,
                };
                let Some((idx, job)) = next else { break };
                if tx.send((idx, work(job))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (idx, result) in rx {
            done(idx, result);
        }
    });
}

/// Runs `work` on every job with at most `threads` threads and returns the
/// results in job order.
pub fn map_ordered<J, R, W>(jobs: Vec<J>, threads: usize, work: W) -> Vec<R>
where
    J: Send,
    R: Send,
    W: Fn(J) -> R + Sync,
{
    let mut slots: Vec<Option<R>> = Vec::new();
    slots.resize_with(jobs.len(), || None);
    for_each_result(jobs, threads, work, |idx, r| slots[idx] = Some(r));
    // Every job ran exactly once (a panic would have propagated), so every
    // slot is filled.
    slots.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    /// A job whose duration depends on its index, so completion order
    /// differs from job order.
    fn slow_square(x: u64) -> u64 {
        std::thread::sleep(Duration::from_millis((x * 7) % 5));
        x * x
    }

    #[test]
    fn results_do_not_depend_on_thread_count() {
        let jobs: Vec<u64> = (0..24).collect();
        let expected: Vec<u64> = jobs.iter().map(|x| x * x).collect();
        for threads in [0, 1, 2, 3, 8, 64] {
            assert_eq!(
                map_ordered(jobs.clone(), threads, slow_square),
                expected,
                "-j {threads}"
            );
        }
        assert!(map_ordered(Vec::<u64>::new(), 4, slow_square).is_empty());
    }

    #[test]
    fn runs_in_parallel_but_never_more_than_n() {
        let running = AtomicUsize::new(0);
        let peak = AtomicUsize::new(0);
        let work = |_: u32| {
            let now = running.fetch_add(1, Ordering::SeqCst) + 1;
            peak.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(30));
            running.fetch_sub(1, Ordering::SeqCst);
        };
        map_ordered((0..12).collect(), 3, work);
        let peak = peak.load(Ordering::SeqCst);
        assert!((2..=3).contains(&peak), "peak concurrency {peak}");
    }

    #[test]
    fn every_result_is_reported_once_with_its_index() {
        let mut seen = vec![0u32; 10];
        for_each_result((0..10u64).collect(), 4, slow_square, |idx, r| {
            assert_eq!(r, (idx as u64) * (idx as u64));
            seen[idx] += 1;
        });
        assert_eq!(seen, vec![1; 10]);
    }
}
