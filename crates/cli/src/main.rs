//! ascendopt command-line interface.
fn main() {}
