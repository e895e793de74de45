//! The allocator policy of the evaluating process (`memory::keep_freed_memory`):
//! large buffers, of every thread, come from the heap and freed ones are
//! reused, not mapped and unmapped anew. Its own binary without the test
//! harness, because the policy is process-wide and must be set before any
//! other thread allocates (as `main` of the CLI does).

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn main() {
    fn mapped_chunks() -> usize {
        // SAFETY: mallinfo2 only reads the allocator's statistics.
        unsafe { libc::mallinfo2().hblks }
    }
    const BIG: usize = 96 << 20;
    // Without the policy, glibc maps a buffer this large on its own.
    let before = std::hint::black_box(vec![1u8; BIG]);
    assert!(mapped_chunks() >= 1, "glibc should map a 96 MiB buffer");
    drop(before);
    assert_eq!(mapped_chunks(), 0);

    assert!(ascendopt_harness::memory::keep_freed_memory());
    let allocate_twice = || {
        let first = std::hint::black_box(vec![1u8; BIG]);
        assert_eq!(mapped_chunks(), 0, "a 96 MiB buffer was mapped anyway");
        let at = first.as_ptr() as usize;
        drop(first);
        let second = std::hint::black_box(vec![2u8; BIG]);
        assert_eq!(mapped_chunks(), 0);
        assert_eq!(second[BIG - 1], 2);
        // The freed heap memory is reused, not returned and grown again.
        second.as_ptr() as usize == at
    };
    assert!(allocate_twice(), "the main thread's buffer was not reused");
    // Another thread (an evaluation of `-j N`, a golden computed aside)
    // allocates from the same heap.
    let reused = std::thread::spawn(allocate_twice)
        .join()
        .expect("the thread's checks passed");
    assert!(reused, "the thread's buffer was not reused");
    println!("test large_buffers_come_from_the_heap_and_are_reused ... ok");
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn main() {
    assert!(!ascendopt_harness::memory::keep_freed_memory());
}
