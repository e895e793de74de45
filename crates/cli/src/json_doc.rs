//! The one shape of every command's `--json` output: a top-level object
//!
//! ```text
//! { "version": 1, "tool": "ascendopt 0.1.0", "command": "eval",
//!   "operators": [ { "op": "add_custom", ... }, ... ],
//!   ... command-level fields ("config", "summary", ...) }
//! ```
//!
//! with `operators` a list even for one operator, and inputs as data
//! (shapes as integer lists, not preformatted strings). The schema of
//! every command's operator items and command-level fields is
//! `docs/schema/ascendopt-output.schema.json`; `crates/cli/tests` validate
//! each command's output against it.

use anyhow::Result;
use serde_json::{Map, Value};

/// Version of the document layout (bumped on an incompatible change).
pub const VERSION: u32 = 1;

/// A `--json` document under construction.
pub struct JsonDoc {
    command: &'static str,
    operators: Vec<Value>,
    fields: Map<String, Value>,
}

impl JsonDoc {
    /// An empty document of `command` (`eval`, `bank list`, ...).
    pub fn new(command: &'static str) -> JsonDoc {
        JsonDoc {
            command,
            operators: Vec::new(),
            fields: Map::new(),
        }
    }

    /// Adds one operator item (must hold `"op"`).
    pub fn operator(&mut self, item: Value) -> &mut JsonDoc {
        self.operators.push(item);
        self
    }

    /// Sets a command-level field (`config`, `summary`, ...).
    pub fn field(&mut self, name: &str, value: Value) -> &mut JsonDoc {
        self.fields.insert(name.to_string(), value);
        self
    }

    /// The document.
    pub fn value(&self) -> Value {
        let mut top = Map::new();
        top.insert("version".into(), Value::from(VERSION));
        top.insert(
            "tool".into(),
            Value::from(format!("ascendopt {}", env!("CARGO_PKG_VERSION"))),
        );
        top.insert("command".into(), Value::from(self.command));
        top.insert("operators".into(), Value::Array(self.operators.clone()));
        for (k, v) in &self.fields {
            top.insert(k.clone(), v.clone());
        }
        Value::Object(top)
    }

    /// Prints the document on stdout.
    pub fn print(&self) -> Result<()> {
        println!("{}", serde_json::to_string_pretty(&self.value())?);
        Ok(())
    }
}
