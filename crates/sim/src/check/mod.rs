//! Checkers over the trace (in progress).
