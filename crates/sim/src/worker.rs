//! The sandboxed worker process (in progress).
