//! Test support shared by the llm crate's integration tests: the scripted local HTTP server.

pub mod server;
