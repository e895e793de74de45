//! The evaluating process's allocator policy.
//!
//! An evaluation allocates its tensors anew: inputs, the golden outputs,
//! poisoned outputs and copies of the results, tens to hundreds of MiB for
//! a benchmark case. glibc serves every allocation above its mmap threshold
//! (at most 32 MiB) with a fresh mapping and unmaps it on free, so each
//! evaluation paid a page fault and a page clear for every 4 KiB it touched
//! (a quarter of a benchmark's CPU time was system time). [`keep_freed_memory`]
//! makes large allocations come from the heap and keeps freed heap memory
//! in the process, so the next evaluation reuses warm pages.
//!
//! Invariant: only the process that calls it is affected (the compiler and
//! the sandboxed workers are other processes); the process keeps its
//! high-water mark of memory until it exits.

/// Serves large allocations from the heap and never returns freed heap
/// memory to the system (glibc on Linux; nothing elsewhere). Returns
/// whether the policy was applied.
pub fn keep_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // One arena for every thread: glibc maps a large block for a
        // thread of its own arena whatever M_MMAP_MAX says (those arenas
        // grow by 64 MiB heaps), so the heap is the main arena's. Small
        // blocks still come from each thread's cache without a lock.
        // SAFETY: mallopt only changes allocator parameters; called before
        // any other thread exists (at the start of main).
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1) == 1
                && libc::mallopt(libc::M_MMAP_MAX, 0) == 1
                && libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX) == 1
                && libc::mallopt(libc::M_TOP_PAD, 64 << 20) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
