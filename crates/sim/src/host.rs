//! Running host tiling code (in progress).
