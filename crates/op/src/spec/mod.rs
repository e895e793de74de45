//! The op.toml schema: parsing and validation. The validated spec types
//! are in [`types`] (re-exported here).
//!
//! [`OpSpec::parse`] turns the text of an op.toml into an [`OpSpec`] whose
//! cases are fully resolved (every tensor has a dtype and a shape, every attr
//! a value, every output a tolerance). Every error names the file, the line
//! and column, and the key path (`cases[2].shapes`). The schema is documented
//! in `ops/README-schema.md`.

pub mod edit;
pub(crate) mod locate;
mod raw;
#[cfg(test)]
mod tests_files;
#[cfg(test)]
mod tests_params;
pub mod types;

use crate::error::{KeyPath, OpError};
use crate::golden::Builtins;
use crate::layout::{ArgLayout, ArgSlot};
use crate::tiling::Constraint;
use crate::Dtype;
use locate::Locator;
use raw::{RawCase, RawDist, RawSpec, RawTensor, RawTolerance};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::tensor::{numel, shape_str, Tensor};
pub use types::*;

impl OpSpec {
    /// Reads and validates an op.toml file; a builtin golden it names is
    /// looked up in `builtins`.
    pub fn load(file: &Path, builtins: &Builtins) -> Result<OpSpec, OpError> {
        let text = std::fs::read_to_string(file).map_err(|e| OpError::io("read", file, e))?;
        OpSpec::parse(&text, file, builtins)
    }

    /// Validates the text of an op.toml; `file` is used in messages, and a
    /// builtin golden it names is looked up in `builtins`.
    pub fn parse(text: &str, file: &Path, builtins: &Builtins) -> Result<OpSpec, OpError> {
        let loc = Locator::new(file, text);
        let raw: RawSpec =
            toml::from_str(text).map_err(|e| loc.error_at_span(e.span(), e.message()))?;
        Builder {
            loc: &loc,
            builtins,
        }
        .build(raw, text, file)
    }

    /// An input by name.
    pub fn input(&self, name: &str) -> Option<&TensorSpec> {
        self.inputs.iter().find(|t| t.name == name)
    }

    /// An attribute by name.
    pub fn attr(&self, name: &str) -> Option<&AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }

    /// A case by name.
    pub fn case(&self, name: &str) -> Option<&Case> {
        self.cases.iter().find(|c| c.name == name)
    }

    /// The tolerance for an output dtype: the operator's override, else the
    /// default.
    pub fn tolerance_for(&self, dtype: Dtype) -> Tolerance {
        self.tolerances
            .get(&dtype)
            .copied()
            .unwrap_or_else(|| default_tolerance(dtype))
    }

    /// A spec error at a key path of this op.toml.
    pub(crate) fn error_at(&self, path: KeyPath, message: impl Into<String>) -> OpError {
        Locator::new(&self.file, &self.text).error(path, message)
    }
}

fn root() -> KeyPath {
    KeyPath::root()
}

/// A value of op.toml that has the wrong form; the parser wraps it in a
/// [`crate::error::SpecError`] with the file, line and key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum ValueError {
    /// A dtype name the crate does not know.
    #[error("unknown dtype `{name}`; expected one of {}", Dtype::all_names())]
    UnknownDtype {
        /// The name given.
        name: String,
    },
    /// An attribute value of the wrong TOML type.
    #[error("expected a value of type {expected}, got {got}")]
    AttrType {
        /// The attribute type's name.
        expected: &'static str,
        /// The TOML type given.
        got: &'static str,
    },
}

fn parse_dtype(name: &str) -> Result<Dtype, ValueError> {
    Dtype::parse(name).ok_or_else(|| ValueError::UnknownDtype {
        name: name.to_string(),
    })
}

fn dtype_list(dtypes: &[Dtype]) -> String {
    dtypes
        .iter()
        .map(|d| d.name())
        .collect::<Vec<_>>()
        .join(", ")
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn names_list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<&str> = names.collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(", ")
    }
}

struct Builder<'a> {
    loc: &'a Locator<'a>,
    builtins: &'a Builtins,
}

impl Builder<'_> {
    fn err(&self, path: KeyPath, message: impl Into<String>) -> OpError {
        self.loc.error(path, message)
    }

    fn build(&self, raw: RawSpec, text: &str, file: &Path) -> Result<OpSpec, OpError> {
        let op_path = root().key("op");
        let op = &raw.op;
        if !is_identifier(&op.name) {
            return Err(self.err(
                op_path.key("name"),
                format!(
                    "`{}` is not a valid operator name (letters, digits, `_`)",
                    op.name
                ),
            ));
        }
        if !(1..=3).contains(&op.level) {
            return Err(self.err(
                op_path.key("level"),
                format!("level {} is out of range; expected 1, 2 or 3", op.level),
            ));
        }
        if !is_identifier(&op.op_type) {
            return Err(self.err(
                op_path.key("op_type"),
                format!("`{}` is not a valid OpDef class name", op.op_type),
            ));
        }
        let kernel = op.kernel.clone().unwrap_or_else(|| op.name.clone());
        if !is_identifier(&kernel) {
            return Err(self.err(
                op_path.key("kernel"),
                format!("`{kernel}` is not a valid kernel symbol"),
            ));
        }
        let host_sources = self.source_list(&op.host_sources, op_path.key("host_sources"))?;
        let kernel_sources = self.source_list(&op.kernel_sources, op_path.key("kernel_sources"))?;
        let tiling_header = match &op.tiling_header {
            Some(p) => {
                self.relative_path(p, op_path.key("tiling_header"))?;
                Some(PathBuf::from(p))
            }
            None => None,
        };
        let chip = match &op.chip {
            Some(c)
                if c.is_empty()
                    || !c
                        .chars()
                        .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_') =>
            {
                return Err(self.err(
                    op_path.key("chip"),
                    format!(
                        "`{c}` is not a chip profile name (lower-case letters, digits and `_`, e.g. `ascend310b`)"
                    ),
                ));
            }
            Some(c) => Some(c.clone()),
            None => None,
        };

        let attrs = self.attrs(&raw)?;
        let inputs = self.tensors(&raw.inputs, "inputs", &raw, &attrs)?;
        let outputs = self.tensors(&raw.outputs, "outputs", &raw, &attrs)?;
        if outputs.is_empty() {
            return Err(self.err(root(), "the operator has no [[outputs]]"));
        }
        for (i, t) in outputs.iter().enumerate() {
            if !t.list {
                continue;
            }
            let path = root().key("outputs").index(i);
            match &t.length_of {
                Some(name) if !inputs.iter().any(|x| &x.name == name && x.list) => {
                    return Err(self.err(
                        path.key("length_of"),
                        format!(
                            "`{name}` is not a list input (list inputs: {})",
                            names_list(inputs.iter().filter(|x| x.list).map(|x| x.name.as_str()))
                        ),
                    ));
                }
                Some(_) => {}
                None if !inputs.iter().any(|x| x.list) => {
                    return Err(self.err(
                        path.key("kind"),
                        format!(
                            "list output `{}` needs a list input whose length it has (`length_of`), and the operator has none",
                            t.name
                        ),
                    ))
                }
                None => {}
            }
        }
        let mut seen = BTreeSet::new();
        for (kind, list) in [("inputs", &inputs), ("outputs", &outputs)] {
            for (i, t) in list.iter().enumerate() {
                if !seen.insert(t.name.clone()) {
                    return Err(self.err(
                        root().key(kind).index(i).key("name"),
                        format!("tensor name `{}` is used twice", t.name),
                    ));
                }
                if t.name == "workspace" || t.name == "tiling" {
                    return Err(self.err(
                        root().key(kind).index(i).key("name"),
                        format!(
                            "`{}` is reserved for the kernel's trailing argument",
                            t.name
                        ),
                    ));
                }
            }
        }

        let mut tolerances = BTreeMap::new();
        for (name, tol) in &raw.tolerance {
            let path = root().key("tolerance").key(name);
            let dtype = parse_dtype(name).map_err(|m| self.err(path.clone(), m.to_string()))?;
            tolerances.insert(dtype, self.tolerance(tol, &path)?);
        }

        let golden = self.golden(&raw)?;
        let constraints = self.constraints(&raw)?;

        let mut spec = OpSpec {
            file: file.to_path_buf(),
            name: op.name.clone(),
            level: op.level as u8,
            op_type: op.op_type.clone(),
            kernel,
            description: op.description.clone(),
            host_sources,
            kernel_sources,
            tiling_header,
            chip,
            inputs,
            outputs,
            attrs,
            tolerances,
            golden,
            constraints,
            cases: Vec::new(),
            text: text.to_string(),
        };

        if raw.cases.is_empty() {
            return Err(self.err(root(), "the operator has no [[cases]]"));
        }
        let mut cases = Vec::new();
        for (i, rc) in raw.cases.iter().enumerate() {
            let path = root().key("cases").index(i);
            if cases.iter().any(|c: &Case| c.name == rc.name) {
                return Err(self.err(
                    path.key("name"),
                    format!("case name `{}` is used twice", rc.name),
                ));
            }
            let case = self.case(rc, &path, &spec)?;
            let expected = self.expected(rc, &path, &spec, &case)?;
            if let GoldenSpec::Files(map) = &mut spec.golden {
                map.insert(case.name.clone(), expected);
            }
            if let GoldenSpec::Builtin(b) = &spec.golden {
                (b.infer)(&case).map_err(|r| self.err(path.key(r.key), r.message))?;
            }
            cases.push(case);
        }
        spec.cases = cases;
        Ok(spec)
    }

    fn relative_path(&self, p: &str, path: KeyPath) -> Result<(), OpError> {
        let pb = Path::new(p);
        if p.is_empty()
            || pb.is_absolute()
            || pb
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return Err(self.err(
                path,
                format!("`{p}` must be a relative path inside the package"),
            ));
        }
        Ok(())
    }

    fn source_list(
        &self,
        list: &Option<Vec<String>>,
        path: KeyPath,
    ) -> Result<Option<Vec<PathBuf>>, OpError> {
        let Some(list) = list else {
            return Ok(None);
        };
        if list.is_empty() {
            return Err(self.err(path, "the list is empty; omit the key to use the default"));
        }
        let mut out = Vec::new();
        for (i, p) in list.iter().enumerate() {
            self.relative_path(p, path.index(i))?;
            out.push(PathBuf::from(p));
        }
        Ok(Some(out))
    }

    fn attrs(&self, raw: &RawSpec) -> Result<Vec<AttrSpec>, OpError> {
        let mut out: Vec<AttrSpec> = Vec::new();
        for (i, ra) in raw.attrs.iter().enumerate() {
            let path = root().key("attrs").index(i);
            if !is_identifier(&ra.name) {
                return Err(self.err(
                    path.key("name"),
                    format!("`{}` is not a valid attr name", ra.name),
                ));
            }
            if out.iter().any(|a| a.name == ra.name) {
                return Err(self.err(
                    path.key("name"),
                    format!("attr name `{}` is used twice", ra.name),
                ));
            }
            let ty = AttrType::parse(&ra.ty).ok_or_else(|| {
                self.err(
                    path.key("type"),
                    format!(
                        "unknown attr type `{}`; expected int, float, bool, str, list_int or list_float",
                        ra.ty
                    ),
                )
            })?;
            let default = match &ra.default {
                Some(v) => Some(
                    attr_value(ty, v).map_err(|m| self.err(path.key("default"), m.to_string()))?,
                ),
                None => None,
            };
            match (ra.required, &default) {
                (true, Some(_)) => {
                    return Err(self.err(
                        path.key("default"),
                        "a required attr takes no default (set required = false)",
                    ))
                }
                (false, None) => {
                    return Err(self.err(
                        path,
                        format!("attr `{}` needs a `default` or `required = true`", ra.name),
                    ))
                }
                _ => {}
            }
            out.push(AttrSpec {
                name: ra.name.clone(),
                ty,
                default,
                required: ra.required,
            });
        }
        Ok(out)
    }

    /// The `by` / `table` dtype rule of an output: both keys, `by` an
    /// input, each table key a dtype of that input at most once.
    fn map_rule(
        &self,
        r: &raw::RawDtypeRule,
        rpath: &KeyPath,
        raw: &RawSpec,
    ) -> Result<DtypeRule, OpError> {
        let (Some(input), Some(table)) = (&r.by, &r.table) else {
            return Err(self.err(
                rpath.clone(),
                "a dtype table needs both keys: dtype = { by = \"<input>\", table = { <input dtype> = \"<output dtype>\", ... } }",
            ));
        };
        let Some(target) = raw.inputs.iter().find(|t| &t.name == input) else {
            return Err(self.err(
                rpath.key("by"),
                format!(
                    "`{input}` is not an input (inputs: {})",
                    names_list(raw.inputs.iter().map(|t| t.name.as_str()))
                ),
            ));
        };
        if table.is_empty() {
            return Err(self.err(rpath.key("table"), "the dtype table is empty"));
        }
        let mut pairs: Vec<(Dtype, Dtype)> = Vec::new();
        for (from, to) in table {
            let at = rpath.key("table").key(from);
            let f = parse_dtype(from).map_err(|m| self.err(at.clone(), m.to_string()))?;
            let t = parse_dtype(to).map_err(|m| self.err(at.clone(), m.to_string()))?;
            if pairs.iter().any(|(g, _)| *g == f) {
                return Err(self.err(at, format!("{f} is mapped twice (names of one dtype)")));
            }
            if let Some(allowed) = &target.dtypes {
                let allowed: Vec<Dtype> =
                    allowed.iter().filter_map(|n| parse_dtype(n).ok()).collect();
                if !allowed.contains(&f) {
                    return Err(self.err(
                        at,
                        format!(
                            "input `{input}` does not allow {f} (allowed: {})",
                            dtype_list(&allowed)
                        ),
                    ));
                }
            }
            pairs.push((f, t));
        }
        Ok(DtypeRule::Map {
            input: input.clone(),
            table: pairs,
        })
    }

    fn tensors(
        &self,
        list: &[RawTensor],
        kind: &str,
        raw: &RawSpec,
        attrs: &[AttrSpec],
    ) -> Result<Vec<TensorSpec>, OpError> {
        let is_output = kind == "outputs";
        let mut out: Vec<TensorSpec> = Vec::new();
        for (i, rt) in list.iter().enumerate() {
            let path = root().key(kind).index(i);
            if !is_identifier(&rt.name) {
                return Err(self.err(
                    path.key("name"),
                    format!("`{}` is not a valid tensor name", rt.name),
                ));
            }
            let mut dtypes = Vec::new();
            match &rt.dtypes {
                Some(list) => {
                    if list.is_empty() {
                        return Err(self.err(path.key("dtypes"), "no dtype listed"));
                    }
                    for (j, name) in list.iter().enumerate() {
                        let d = parse_dtype(name)
                            .map_err(|m| self.err(path.key("dtypes").index(j), m.to_string()))?;
                        if dtypes.contains(&d) {
                            return Err(self
                                .err(path.key("dtypes").index(j), format!("{d} is listed twice")));
                        }
                        dtypes.push(d);
                    }
                }
                None if !is_output => {
                    return Err(self.err(
                        path.key("dtypes"),
                        format!("input `{}` lists no dtypes", rt.name),
                    ))
                }
                None => {}
            }
            let rule = match &rt.dtype {
                None => None,
                Some(r) => {
                    let rpath = path.key("dtype");
                    let given = [
                        r.same_as.as_ref().map(|_| "same_as"),
                        r.real_of.as_ref().map(|_| "real_of"),
                        r.fixed.as_ref().map(|_| "fixed"),
                        r.from_attr.as_ref().map(|_| "from_attr"),
                        (r.by.is_some() || r.table.is_some()).then_some("by/table"),
                    ];
                    let given: Vec<&str> = given.into_iter().flatten().collect();
                    if given.len() != 1 {
                        return Err(self.err(
                            rpath,
                            format!(
                                "give exactly one of same_as, real_of, fixed, from_attr, by with table (got {})",
                                if given.is_empty() {
                                    "none".to_string()
                                } else {
                                    given.join(", ")
                                }
                            ),
                        ));
                    }
                    if r.by.is_some() || r.table.is_some() {
                        Some(self.map_rule(r, &rpath, raw)?)
                    } else if let Some(other) = r.same_as.as_ref().or(r.real_of.as_ref()) {
                        let earlier =
                            raw.inputs
                                .iter()
                                .take(if is_output { usize::MAX } else { i });
                        if !earlier.clone().any(|t| &t.name == other) {
                            let what = if is_output {
                                "an input"
                            } else {
                                "an earlier input"
                            };
                            return Err(self.err(
                                rpath.key(if r.same_as.is_some() {
                                    "same_as"
                                } else {
                                    "real_of"
                                }),
                                format!(
                                    "`{other}` is not {what} (inputs: {})",
                                    names_list(earlier.map(|t| t.name.as_str()))
                                ),
                            ));
                        }
                        if r.same_as.is_some() {
                            Some(DtypeRule::SameAs(other.clone()))
                        } else {
                            Some(DtypeRule::RealOf(other.clone()))
                        }
                    } else if let Some(name) = &r.fixed {
                        let d = parse_dtype(name)
                            .map_err(|m| self.err(rpath.key("fixed"), m.to_string()))?;
                        Some(DtypeRule::Fixed(d))
                    } else if let Some(attr) = &r.from_attr {
                        match attrs.iter().find(|a| &a.name == attr) {
                            Some(a) if matches!(a.ty, AttrType::Int | AttrType::Str) => {}
                            Some(a) => {
                                return Err(self.err(
                                    rpath.key("from_attr"),
                                    format!(
                                        "attr `{attr}` is of type {}; a dtype attr must be int (ge::DataType code) or str",
                                        a.ty.name()
                                    ),
                                ))
                            }
                            None => {
                                return Err(self.err(
                                    rpath.key("from_attr"),
                                    format!(
                                        "no attr named `{attr}` (attrs: {})",
                                        names_list(attrs.iter().map(|a| a.name.as_str()))
                                    ),
                                ))
                            }
                        }
                        Some(DtypeRule::FromAttr(attr.clone()))
                    } else {
                        None
                    }
                }
            };
            if !is_output
                && matches!(
                    rule,
                    Some(
                        DtypeRule::Fixed(_)
                            | DtypeRule::FromAttr(_)
                            | DtypeRule::RealOf(_)
                            | DtypeRule::Map { .. }
                    )
                )
            {
                return Err(self.err(
                    path.key("dtype"),
                    "an input's dtype rule can only be same_as; list fixed dtypes in `dtypes`",
                ));
            }
            // Kind, optional, value-depend, in place, checked.
            let list = match rt.kind.as_deref() {
                None | Some("tensor") => false,
                Some("list") => true,
                Some(other) => {
                    return Err(self.err(
                        path.key("kind"),
                        format!("unknown kind `{other}`; expected tensor or list (a tensor list, an OpDef DYNAMIC parameter)"),
                    ))
                }
            };
            for (key, given) in [("optional", rt.optional), ("value_depend", rt.value_depend)] {
                if is_output && given {
                    return Err(self.err(path.key(key), format!("`{key}` applies to inputs only")));
                }
            }
            for (key, given) in [
                ("inplace", rt.inplace.is_some()),
                ("argument", rt.argument.is_some()),
                ("check", rt.check.is_some()),
                ("length_of", rt.length_of.is_some()),
            ] {
                if !is_output && given {
                    return Err(self.err(path.key(key), format!("`{key}` applies to outputs only")));
                }
            }
            if rt.optional && list {
                return Err(self.err(
                    path.key("optional"),
                    "a tensor list cannot be optional (a case gives it as many tensors as it likes)",
                ));
            }
            if rt.length_of.is_some() && !list {
                return Err(self.err(
                    path.key("length_of"),
                    "`length_of` applies to list outputs only",
                ));
            }
            if rt.argument == Some(false) && rt.inplace.is_none() {
                return Err(self.err(
                    path.key("argument"),
                    "`argument = false` needs `inplace = \"<input>\"`: an output without a kernel argument is read from the input the kernel writes into",
                ));
            }
            let mut rule = rule;
            if let Some(input) = &rt.inplace {
                let Some(target) = raw.inputs.iter().find(|t| &t.name == input) else {
                    return Err(self.err(
                        path.key("inplace"),
                        format!(
                            "`{input}` is not an input (inputs: {})",
                            names_list(raw.inputs.iter().map(|t| t.name.as_str()))
                        ),
                    ));
                };
                if (target.kind.as_deref() == Some("list")) != list {
                    return Err(self.err(
                        path.key("inplace"),
                        format!(
                            "`{}` and input `{input}` must both be lists or both single tensors",
                            rt.name
                        ),
                    ));
                }
                if target.optional {
                    return Err(self.err(
                        path.key("inplace"),
                        format!("input `{input}` is optional; an output cannot be it in place"),
                    ));
                }
                match &rule {
                    None => rule = Some(DtypeRule::SameAs(input.clone())),
                    Some(DtypeRule::SameAs(other)) if other == input => {}
                    Some(_) => {
                        return Err(self.err(
                            path.key("dtype"),
                            format!("an in-place output has the dtype of its input: dtype = {{ same_as = \"{input}\" }}"),
                        ))
                    }
                }
            }
            let rule = match rule {
                Some(r) => Some(r),
                None if is_output && dtypes.len() == 1 => Some(DtypeRule::Fixed(dtypes[0])),
                None if is_output => {
                    return Err(self.err(
                        path,
                        format!(
                            "output `{}` needs a dtype rule: dtype = {{ same_as = \"<input>\" }}, {{ fixed = \"<dtype>\" }} or {{ from_attr = \"<attr>\" }}",
                            rt.name
                        ),
                    ))
                }
                None => None,
            };
            out.push(TensorSpec {
                name: rt.name.clone(),
                dtypes,
                rule,
                list,
                optional: rt.optional,
                value_depend: rt.value_depend,
                inplace: rt.inplace.clone(),
                argument: rt.argument.unwrap_or(true),
                checked: rt.check.unwrap_or(true),
                length_of: rt.length_of.clone(),
            });
        }
        Ok(out)
    }

    fn tolerance(&self, t: &RawTolerance, path: &KeyPath) -> Result<Tolerance, OpError> {
        for (key, v) in [("atol", t.atol), ("rtol", t.rtol)] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(self.err(
                    path.key(key),
                    format!("{key} = {v} must be finite and >= 0"),
                ));
            }
        }
        let ratio = t.max_mismatch_ratio.unwrap_or(0.0);
        if !(ratio.is_finite() && (0.0..1.0).contains(&ratio)) {
            return Err(self.err(
                path.key("max_mismatch_ratio"),
                format!("max_mismatch_ratio = {ratio} must be at least 0 and below 1 (0.001 allows one element in a thousand)"),
            ));
        }
        Ok(Tolerance {
            atol: t.atol,
            rtol: t.rtol,
            max_mismatch_ratio: ratio,
        })
    }

    fn golden(&self, raw: &RawSpec) -> Result<GoldenSpec, OpError> {
        let path = root().key("golden");
        let Some(g) = &raw.golden else {
            return match self.builtins.get(&raw.op.name) {
                Some(b) => Ok(GoldenSpec::Builtin(*b)),
                None => Err(self.err(
                    root(),
                    format!(
                        "no [golden] table and no builtin golden named `{}`; add [golden] with builtin = \"...\" or script = \"golden.py\"",
                        raw.op.name
                    ),
                )),
            };
        };
        if let Some(files) = g.files {
            if g.builtin.is_some() || g.script.is_some() || !files {
                return Err(self.err(
                    path.key("files"),
                    "files = true takes the expected outputs from each case's `expected` files, instead of `builtin` or `script`",
                ));
            }
            return Ok(GoldenSpec::Files(BTreeMap::new()));
        }
        match (&g.builtin, &g.script) {
            (Some(name), None) => {
                let Some(b) = self.builtins.get(name) else {
                    return Err(self.err(
                        path.key("builtin"),
                        format!(
                            "no builtin golden named `{name}` (builtins: {})",
                            names_list(self.builtins.iter().map(|b| b.name))
                        ),
                    ));
                };
                Ok(GoldenSpec::Builtin(*b))
            }
            (None, Some(script)) => {
                self.relative_path(script, path.key("script"))?;
                Ok(GoldenSpec::Script(PathBuf::from(script)))
            }
            _ => Err(self.err(
                path,
                "give exactly one of `builtin`, `script` and `files = true`",
            )),
        }
    }

    fn constraints(&self, raw: &RawSpec) -> Result<Vec<Constraint>, OpError> {
        let mut out = Vec::new();
        if let Some(t) = &raw.tiling {
            for (i, text) in t.constraints.iter().enumerate() {
                let c = Constraint::parse(text).map_err(|e| {
                    self.err(
                        root().key("tiling").key("constraints").index(i),
                        e.to_string(),
                    )
                })?;
                out.push(c);
            }
        }
        Ok(out)
    }

    fn case(&self, rc: &RawCase, path: &KeyPath, spec: &OpSpec) -> Result<Case, OpError> {
        if rc.name.is_empty() || rc.name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(self.err(
                path.key("name"),
                format!("case name `{}` must be non-empty without spaces", rc.name),
            ));
        }
        // Which inputs the case gives: every one but the optional inputs it
        // leaves out.
        for (j, name) in rc.omit.iter().enumerate() {
            let at = path.key("omit").index(j);
            match spec.input(name) {
                Some(t) if t.optional => {}
                Some(_) => {
                    return Err(self.err(
                        at,
                        format!("input `{name}` is not optional (`optional = true`); a case cannot leave it out"),
                    ))
                }
                None => {
                    return Err(self.err(
                        at,
                        format!(
                            "no input named `{name}` (inputs: {})",
                            names_list(spec.inputs.iter().map(|t| t.name.as_str()))
                        ),
                    ))
                }
            }
            if rc.omit[..j].contains(name) {
                return Err(self.err(at, format!("`{name}` is left out twice")));
            }
        }
        let present: Vec<&TensorSpec> = spec
            .inputs
            .iter()
            .filter(|t| !rc.omit.contains(&t.name))
            .collect();
        // Shapes: one per present input; a tensor list gives a list of them.
        let n_in = present.len();
        if rc.shapes.len() != n_in {
            let given = rc.shapes.len();
            let left_out = if rc.omit.is_empty() {
                String::new()
            } else {
                format!(" (this case leaves out {})", rc.omit.join(", "))
            };
            return Err(self.err(
                path.key("shapes"),
                format!(
                    "{given} shape{} given but the operator has {n_in} input{}{left_out}",
                    if given == 1 { "" } else { "s" },
                    if n_in == 1 { "" } else { "s" }
                ),
            ));
        }
        let mut shapes: Vec<Vec<Vec<usize>>> = Vec::new();
        for (i, (t, value)) in present.iter().zip(&rc.shapes).enumerate() {
            let at = path.key("shapes").index(i);
            if t.list {
                let items = match value.as_array() {
                    Some(items) if items.iter().all(|v| v.is_array()) => items,
                    _ => {
                        return Err(self.err(
                            at,
                            format!(
                                "input `{}` is a tensor list: give a list of shapes, e.g. [[4, 8], [16]]",
                                t.name
                            ),
                        ))
                    }
                };
                if items.is_empty() {
                    return Err(self.err(
                        at,
                        format!("tensor list `{}` needs at least one tensor", t.name),
                    ));
                }
                let mut list = Vec::new();
                for (k, item) in items.iter().enumerate() {
                    list.push(self.shape(item, at.index(k), &t.name)?);
                }
                shapes.push(list);
            } else {
                shapes.push(vec![self.shape(value, at, &t.name)?]);
            }
        }

        // Attrs.
        for key in rc.attrs.keys() {
            if spec.attr(key).is_none() {
                return Err(self.err(
                    path.key("attrs").key(key),
                    format!(
                        "the operator has no attr `{key}` (attrs: {})",
                        names_list(spec.attrs.iter().map(|a| a.name.as_str()))
                    ),
                ));
            }
        }
        let mut attrs = Vec::new();
        for a in &spec.attrs {
            let value = match rc.attrs.get(&a.name) {
                Some(v) => attr_value(a.ty, v)
                    .map_err(|m| self.err(path.key("attrs").key(&a.name), m.to_string()))?,
                None => match &a.default {
                    Some(d) => d.clone(),
                    None => {
                        let at = if rc.attrs.is_empty() {
                            path.clone()
                        } else {
                            path.key("attrs")
                        };
                        return Err(self.err(
                            at,
                            format!("required attr `{}` has no value in this case", a.name),
                        ));
                    }
                },
            };
            attrs.push((a.name.clone(), value));
        }

        // Dtypes of inputs.
        let single = match &rc.dtype {
            Some(name) => {
                Some(parse_dtype(name).map_err(|m| self.err(path.key("dtype"), m.to_string()))?)
            }
            None => None,
        };
        let mut per_tensor = BTreeMap::new();
        for (key, name) in &rc.dtypes {
            let kpath = path.key("dtypes").key(key);
            let is_tensor = spec
                .inputs
                .iter()
                .chain(&spec.outputs)
                .any(|t| &t.name == key);
            if !is_tensor {
                return Err(self.err(
                    kpath,
                    format!(
                        "no tensor named `{key}` (tensors: {})",
                        names_list(
                            spec.inputs
                                .iter()
                                .chain(&spec.outputs)
                                .map(|t| t.name.as_str())
                        )
                    ),
                ));
            }
            let d = parse_dtype(name).map_err(|m| self.err(kpath, m.to_string()))?;
            per_tensor.insert(key.clone(), d);
        }
        // Per spec input (None: left out).
        let mut input_dtypes: Vec<Option<(Dtype, KeyPath)>> = Vec::new();
        for t in &spec.inputs {
            if rc.omit.contains(&t.name) {
                if per_tensor.contains_key(&t.name) {
                    return Err(self.err(
                        path.key("dtypes").key(&t.name),
                        format!("input `{}` is left out of this case", t.name),
                    ));
                }
                input_dtypes.push(None);
                continue;
            }
            let from_map = per_tensor
                .get(&t.name)
                .map(|d| (*d, path.key("dtypes").key(&t.name)));
            let same_as = match &t.rule {
                Some(DtypeRule::SameAs(other)) => spec
                    .inputs
                    .iter()
                    .position(|o| &o.name == other)
                    .and_then(|j| input_dtypes.get(j).cloned().flatten()),
                _ => None,
            };
            let resolved = from_map
                .or_else(|| single.map(|d| (d, path.key("dtype"))))
                .or_else(|| same_as.clone())
                .or_else(|| (t.dtypes.len() == 1).then(|| (t.dtypes[0], path.clone())));
            let Some((dtype, at)) = resolved else {
                return Err(self.err(
                    path.clone(),
                    format!(
                        "no dtype for input `{}`: set `dtype = \"...\"` or `dtypes = {{ {} = \"...\" }}`",
                        t.name, t.name
                    ),
                ));
            };
            if !t.dtypes.contains(&dtype) {
                return Err(self.err(
                    at,
                    format!(
                        "{dtype} is not allowed for input `{}` (allowed: {})",
                        t.name,
                        dtype_list(&t.dtypes)
                    ),
                ));
            }
            if let Some((other, _)) = &same_as {
                if *other != dtype {
                    let other_name = match &t.rule {
                        Some(DtypeRule::SameAs(o)) => o.as_str(),
                        _ => "",
                    };
                    return Err(self.err(
                        at,
                        format!(
                            "input `{}` must have the dtype of `{other_name}` ({other}) but is {dtype}",
                            t.name
                        ),
                    ));
                }
            }
            input_dtypes.push(Some((dtype, at)));
        }

        // Dtypes of outputs.
        let case_tol = match &rc.tolerance {
            Some(t) => Some(self.tolerance(t, &path.key("tolerance"))?),
            None => None,
        };
        let mut resolved_outputs: Vec<(&TensorSpec, Dtype)> = Vec::new();
        for t in &spec.outputs {
            let (dtype, at) = match &t.rule {
                Some(DtypeRule::SameAs(name) | DtypeRule::RealOf(name)) => {
                    let j = spec
                        .inputs
                        .iter()
                        .position(|o| &o.name == name)
                        .unwrap_or(0);
                    let real = matches!(t.rule, Some(DtypeRule::RealOf(_)));
                    match input_dtypes.get(j) {
                        Some(Some((d, at))) if real => {
                            (d.complex_part().unwrap_or(*d), at.clone())
                        }
                        Some(Some(x)) => x.clone(),
                        Some(None) => {
                            return Err(self.err(
                                path.key("omit"),
                                format!(
                                    "output `{}` takes its dtype from `{name}`, which this case leaves out",
                                    t.name
                                ),
                            ))
                        }
                        None => {
                            return Err(
                                self.err(path.clone(), "internal: dtype rule names no input")
                            )
                        }
                    }
                }
                Some(DtypeRule::Fixed(d)) => (*d, path.clone()),
                Some(DtypeRule::Map { input, table }) => {
                    let j = spec
                        .inputs
                        .iter()
                        .position(|o| &o.name == input)
                        .unwrap_or(0);
                    let Some(Some((d, at))) = input_dtypes.get(j) else {
                        return Err(self.err(
                            path.key("omit"),
                            format!(
                                "output `{}` takes its dtype from `{input}`, which this case leaves out",
                                t.name
                            ),
                        ));
                    };
                    match table.iter().find(|(from, _)| from == d) {
                        Some((_, to)) => (*to, at.clone()),
                        None => {
                            return Err(self.err(
                                at.clone(),
                                format!(
                                    "output `{}` maps the dtype of `{input}` by a table that has no {d} (it has {})",
                                    t.name,
                                    dtype_list(&table.iter().map(|(f, _)| *f).collect::<Vec<_>>())
                                ),
                            ))
                        }
                    }
                }
                Some(DtypeRule::FromAttr(attr)) => {
                    let at = path.key("attrs").key(attr);
                    let value = attrs.iter().find(|(n, _)| n == attr).map(|(_, v)| v);
                    let d = match value {
                        Some(AttrValue::Int(code)) => {
                            Dtype::from_ge_code(*code).ok_or_else(|| {
                                self.err(
                                    at.clone(),
                                    format!("{attr} = {code} is not a known ge::DataType code"),
                                )
                            })?
                        }
                        Some(AttrValue::Str(name)) => {
                            parse_dtype(name).map_err(|m| self.err(at.clone(), m.to_string()))?
                        }
                        _ => {
                            return Err(self.err(at, format!("attr `{attr}` does not give a dtype")))
                        }
                    };
                    (d, at)
                }
                None => return Err(self.err(path.clone(), "internal: output without dtype rule")),
            };
            if let Some(&declared) = per_tensor.get(&t.name) {
                if declared != dtype {
                    return Err(self.err(
                        path.key("dtypes").key(&t.name),
                        format!(
                            "output `{}` is {declared} here but its dtype rule gives {dtype}",
                            t.name
                        ),
                    ));
                }
            }
            if !t.dtypes.is_empty() && !t.dtypes.contains(&dtype) {
                return Err(self.err(
                    at,
                    format!(
                        "output `{}` would be {dtype}, which is not allowed (allowed: {})",
                        t.name,
                        dtype_list(&t.dtypes)
                    ),
                ));
            }
            resolved_outputs.push((t, dtype));
        }

        // Value distributions and specials.
        for key in rc.inputs.keys() {
            if spec.input(key).is_none() {
                return Err(self.err(
                    path.key("inputs").key(key),
                    format!(
                        "no input named `{key}` (inputs: {})",
                        names_list(spec.inputs.iter().map(|t| t.name.as_str()))
                    ),
                ));
            }
        }
        let case_specials = match &rc.specials {
            Some(v) => specials(v).map_err(|e| self.err(path.key("specials"), e.to_string()))?,
            None => Vec::new(),
        };
        for key in rc.inputs.keys() {
            if rc.omit.contains(key) {
                return Err(self.err(
                    path.key("inputs").key(key),
                    format!("input `{key}` is left out of this case"),
                ));
            }
        }
        // Input tensors, a list's elements one after another, and the
        // kernel argument of each spec input.
        let mut inputs = Vec::new();
        let mut input_slots = Vec::new();
        let mut first_of: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        let mut present_shapes = shapes.into_iter();
        for (t, dtype) in spec.inputs.iter().zip(&input_dtypes) {
            let Some((dtype, _)) = dtype else {
                input_slots.push(ArgSlot::Absent);
                continue;
            };
            let list_shapes = present_shapes.next().unwrap_or_default();
            let dpath = path.key("inputs").key(&t.name);
            let default_dist = RawDist::default();
            let rd = rc.inputs.get(&t.name).unwrap_or(&default_dist);
            let dist = if rd.kind.as_deref() == Some("file") {
                if t.list || list_shapes.len() != 1 {
                    return Err(self.err(
                        dpath.key("kind"),
                        format!(
                            "kind = \"file\" gives one tensor; `{}` is a tensor list",
                            t.name
                        ),
                    ));
                }
                self.file_input(rd, &dpath, spec, *dtype, &list_shapes[0])?
            } else {
                self.dist(rd, &dpath, *dtype)?
            };
            let specials = match &rd.specials {
                Some(v) => {
                    specials(v).map_err(|e| self.err(dpath.key("specials"), e.to_string()))?
                }
                None => case_specials.clone(),
            };
            let start = inputs.len();
            first_of.insert(t.name.as_str(), (start, list_shapes.len()));
            for (k, shape) in list_shapes.into_iter().enumerate() {
                inputs.push(CaseInput {
                    name: t.name.clone(),
                    list_index: t.list.then_some(k),
                    dtype: *dtype,
                    shape,
                    dist: dist.clone(),
                    specials: if matches!(dist, Dist::File { .. }) {
                        Vec::new()
                    } else {
                        specials.clone()
                    },
                });
            }
            input_slots.push(if t.list {
                ArgSlot::List((start..inputs.len()).collect())
            } else {
                ArgSlot::One(start)
            });
        }
        // Output tensors: a list output has as many as its list input.
        let mut outputs = Vec::new();
        let mut output_slots = Vec::new();
        let mut in_place = Vec::new();
        let first_list = spec.inputs.iter().find(|x| x.list).map(|x| x.name.as_str());
        for (t, dtype) in resolved_outputs {
            let count = if t.list {
                let source = t
                    .inplace
                    .as_deref()
                    .or(t.length_of.as_deref())
                    .or(first_list)
                    .unwrap_or("");
                first_of.get(source).map_or(0, |&(_, n)| n)
            } else {
                1
            };
            let source = t
                .inplace
                .as_deref()
                .and_then(|x| first_of.get(x))
                .map(|&(s, _)| s);
            let start = outputs.len();
            for k in 0..count {
                let inplace_of = source.map(|s| s + k);
                if let Some(i) = inplace_of {
                    in_place.push((outputs.len(), i));
                }
                outputs.push(CaseOutput {
                    name: t.name.clone(),
                    list_index: t.list.then_some(k),
                    dtype,
                    tolerance: case_tol.unwrap_or_else(|| spec.tolerance_for(dtype)),
                    checked: t.checked,
                    inplace_of,
                });
            }
            if !t.argument {
                // No kernel argument: read back from its input's memory.
                continue;
            }
            output_slots.push(if t.list {
                ArgSlot::List((start..outputs.len()).collect())
            } else {
                ArgSlot::One(start)
            });
        }

        let host_values = inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| spec.input(&i.name).is_some_and(|t| t.value_depend))
            .map(|(k, _)| k)
            .collect();
        Ok(Case {
            name: rc.name.clone(),
            inputs,
            outputs,
            attrs,
            omitted: rc.omit.clone(),
            layout: ArgLayout {
                host_values,
                inputs: input_slots,
                outputs: output_slots,
                in_place,
            },
        })
    }

    /// One tensor's shape (`[4, 8]`; `[]` is a scalar).
    fn shape(&self, value: &toml::Value, at: KeyPath, name: &str) -> Result<Vec<usize>, OpError> {
        let Some(dims) = value.as_array() else {
            return Err(self.err(
                at,
                format!("the shape of `{name}` must be a list of dimensions like [4, 8]"),
            ));
        };
        let mut shape = Vec::new();
        for (j, dim) in dims.iter().enumerate() {
            let d = match dim {
                toml::Value::Integer(d) => *d,
                toml::Value::Array(_) => {
                    return Err(self.err(
                        at,
                        format!("input `{name}` is a single tensor: give one shape like [4, 8] (a list of shapes is for `kind = \"list\"` inputs)"),
                    ))
                }
                other => {
                    return Err(self.err(
                        at.index(j),
                        format!("dimension {other} is not an integer"),
                    ))
                }
            };
            if d < 0 {
                return Err(self.err(at.index(j), format!("dimension {d} is negative")));
            }
            shape.push(d as usize);
        }
        let total = shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .filter(|&n| n <= 1 << 31);
        if total.is_none() {
            return Err(self.err(at, "more than 2^31 elements"));
        }
        Ok(shape)
    }

    /// Reads a data file of the package: `rel` checked to stay inside it.
    fn package_file(&self, spec: &OpSpec, rel: &str, at: &KeyPath) -> Result<Vec<u8>, OpError> {
        self.relative_path(rel, at.clone())?;
        let dir = spec.file.parent().unwrap_or_else(|| Path::new("."));
        let p = dir.join(rel);
        std::fs::read(&p)
            .map_err(|e| self.err(at.clone(), format!("cannot read {}: {e}", p.display())))
    }

    /// The tensor of a data file with the given dtype and shape: `.npy`
    /// (its dtype and shape must match; `shape` None takes the file's), or
    /// raw little-endian elements (`.bin` and any other name) whose count
    /// must be the shape's.
    fn file_tensor(
        &self,
        spec: &OpSpec,
        rel: &str,
        at: &KeyPath,
        dtype: Dtype,
        shape: Option<&[usize]>,
    ) -> Result<Tensor, OpError> {
        let bytes = self.package_file(spec, rel, at)?;
        if rel.ends_with(".npy") {
            let t = crate::npy::read_npy(&bytes, rel)
                .map_err(|e| self.err(at.clone(), e.to_string()))?;
            if t.dtype != dtype {
                return Err(self.err(
                    at.clone(),
                    format!("{rel} holds {}, the case needs {dtype}", t.dtype),
                ));
            }
            if let Some(shape) = shape {
                if numel(&t.shape) != numel(shape) {
                    return Err(self.err(
                        at.clone(),
                        format!(
                            "{rel} has the shape {}, the case needs {}",
                            shape_str(&t.shape),
                            shape_str(shape)
                        ),
                    ));
                }
                return Ok(Tensor {
                    shape: shape.to_vec(),
                    ..t
                });
            }
            return Ok(t);
        }
        let Some(shape) = shape else {
            return Err(self.err(
                at.clone(),
                format!("{rel} is raw data: give its `shape` (or use an .npy file)"),
            ));
        };
        let want = numel(shape) * dtype.size();
        if bytes.len() != want {
            return Err(self.err(
                at.clone(),
                format!(
                    "{rel} holds {} bytes; {} elements of {dtype} (shape {}) are {want}",
                    bytes.len(),
                    numel(shape),
                    shape_str(shape)
                ),
            ));
        }
        Ok(Tensor {
            dtype,
            shape: shape.to_vec(),
            data: bytes,
        })
    }

    /// An input of `kind = "file"`.
    fn file_input(
        &self,
        rd: &RawDist,
        path: &KeyPath,
        spec: &OpSpec,
        dtype: Dtype,
        shape: &[usize],
    ) -> Result<Dist, OpError> {
        let extra = [
            ("low", rd.low.is_some()),
            ("high", rd.high.is_some()),
            ("mean", rd.mean.is_some()),
            ("scale", rd.scale.is_some()),
            ("sign", rd.sign.is_some()),
            ("specials", rd.specials.is_some()),
        ];
        if let Some((key, _)) = extra.iter().find(|(_, present)| *present) {
            return Err(self.err(
                path.key(key),
                format!("`{key}` does not apply to kind = \"file\" (keys: path)"),
            ));
        }
        let Some(rel) = rd.path.as_deref() else {
            return Err(self.err(path.clone(), "kind = \"file\" needs `path`"));
        };
        let tensor = self.file_tensor(spec, rel, &path.key("path"), dtype, Some(shape))?;
        Ok(Dist::File {
            path: rel.to_string(),
            tensor: Arc::new(tensor),
        })
    }

    /// A case's `expected` files, in output order; with `[golden] files =
    /// true` every output needs one. A raw `.bin` without `shape` takes the
    /// shape of the case's first input.
    fn expected(
        &self,
        rc: &RawCase,
        path: &KeyPath,
        spec: &OpSpec,
        case: &Case,
    ) -> Result<Vec<Arc<Tensor>>, OpError> {
        let files = matches!(spec.golden, GoldenSpec::Files(_));
        if !files {
            if let Some(key) = rc.expected.keys().next() {
                return Err(self.err(
                    path.key("expected").key(key),
                    "expected-output files need [golden] files = true",
                ));
            }
            return Ok(Vec::new());
        }
        for key in rc.expected.keys() {
            if !case.outputs.iter().any(|o| &o.name == key) {
                return Err(self.err(
                    path.key("expected").key(key),
                    format!(
                        "no output named `{key}` (outputs: {})",
                        names_list(spec.outputs.iter().map(|t| t.name.as_str()))
                    ),
                ));
            }
        }
        let mut out = Vec::new();
        for o in &case.outputs {
            let at = path.key("expected").key(&o.name);
            if o.list_index.is_some() {
                return Err(self.err(
                    at,
                    "expected-output files do not describe tensor-list outputs yet",
                ));
            }
            let Some(v) = rc.expected.get(&o.name) else {
                return Err(self.err(
                    path.key("expected"),
                    format!("[golden] files = true: give output `{}` a file", o.name),
                ));
            };
            let (rel, shape) = match v {
                toml::Value::String(p) => (p.clone(), None),
                toml::Value::Table(t) => {
                    if let Some(k) = t.keys().find(|k| *k != "path" && *k != "shape") {
                        return Err(
                            self.err(at.key(k), format!("unknown key `{k}` (keys: path, shape)"))
                        );
                    }
                    let Some(p) = t.get("path").and_then(|p| p.as_str()) else {
                        return Err(self.err(at, "needs `path`"));
                    };
                    let shape = match t.get("shape") {
                        Some(s) => Some(self.shape(s, at.key("shape"), &o.name)?),
                        None => None,
                    };
                    (p.to_string(), shape)
                }
                _ => {
                    return Err(self.err(
                        at,
                        "give a file path, or a table { path = \"...\", shape = [...] }",
                    ))
                }
            };
            let shape = match shape {
                Some(s) => Some(s),
                None if rel.ends_with(".npy") => None,
                None => case.inputs.first().map(|i| i.shape.clone()),
            };
            let t = self.file_tensor(spec, &rel, &at, o.dtype, shape.as_deref())?;
            out.push(Arc::new(t));
        }
        Ok(out)
    }

    fn dist(&self, rd: &RawDist, path: &KeyPath, dtype: Dtype) -> Result<Dist, OpError> {
        // A complex input draws each part from the distribution.
        let dtype = dtype.complex_part().unwrap_or(dtype);
        let kind = rd.kind.as_deref().unwrap_or("mixed");
        let allowed: &[&str] = match kind {
            "mixed" => &["scale", "sign"],
            "uniform" | "int" => &["low", "high"],
            "normal" => &["mean", "scale"],
            other => {
                return Err(self.err(
                    path.key("kind"),
                    format!(
                    "unknown distribution `{other}`; expected mixed, uniform, normal, int or file"
                ),
                ))
            }
        };
        let present = [
            ("low", rd.low.is_some()),
            ("high", rd.high.is_some()),
            ("mean", rd.mean.is_some()),
            ("scale", rd.scale.is_some()),
            ("sign", rd.sign.is_some()),
            ("path", rd.path.is_some()),
        ];
        for (key, is_present) in present {
            if is_present && !allowed.contains(&key) {
                return Err(self.err(
                    path.key(key),
                    format!(
                        "`{key}` does not apply to kind = \"{kind}\" (keys: {})",
                        allowed.join(", ")
                    ),
                ));
            }
        }
        let finite = |key: &str, v: f64| -> Result<f64, OpError> {
            if v.is_finite() {
                Ok(v)
            } else {
                Err(self.err(path.key(key), format!("{key} must be finite")))
            }
        };
        let need = |key: &str, v: Option<f64>| -> Result<f64, OpError> {
            match v {
                Some(v) => finite(key, v),
                None => Err(self.err(path.clone(), format!("kind = \"{kind}\" needs `{key}`"))),
            }
        };
        let dist = match kind {
            "mixed" => {
                let scale = match rd.scale {
                    Some(s) => finite("scale", s)?,
                    None if dtype.is_float() => 1.0,
                    None => 100.0,
                };
                if scale <= 0.0 {
                    return Err(self.err(path.key("scale"), "scale must be > 0"));
                }
                let sign = match rd.sign.as_deref() {
                    None | Some("any") => Sign::Any,
                    Some("positive") => Sign::Positive,
                    Some("negative") => Sign::Negative,
                    Some(other) => {
                        return Err(self.err(
                            path.key("sign"),
                            format!("unknown sign `{other}`; expected any, positive or negative"),
                        ))
                    }
                };
                Dist::Mixed { scale, sign }
            }
            "uniform" => {
                let low = need("low", rd.low)?;
                let high = need("high", rd.high)?;
                // low == high: every element is that value (msopst's
                // `value_range: [[v, v]]`, e.g. the step of an arange).
                if low > high {
                    return Err(self.err(
                        path.key("high"),
                        format!("high = {high} must not be below low = {low}"),
                    ));
                }
                if !dtype.is_float() && (low.fract() != 0.0 || high.fract() != 0.0) {
                    return Err(self.err(path.clone(), format!("{dtype} needs integer bounds")));
                }
                Dist::Uniform { low, high }
            }
            "normal" => {
                let mean = rd
                    .mean
                    .map(|m| finite("mean", m))
                    .transpose()?
                    .unwrap_or(0.0);
                let scale = rd
                    .scale
                    .map(|s| finite("scale", s))
                    .transpose()?
                    .unwrap_or(1.0);
                if scale <= 0.0 {
                    return Err(self.err(path.key("scale"), "scale must be > 0"));
                }
                Dist::Normal { mean, scale }
            }
            _ => {
                let low = need("low", rd.low)?;
                let high = need("high", rd.high)?;
                if low.fract() != 0.0
                    || high.fract() != 0.0
                    || low.abs() > 9e15
                    || high.abs() > 9e15
                {
                    return Err(self.err(path.clone(), "int bounds must be integers"));
                }
                if low > high {
                    return Err(self.err(
                        path.key("high"),
                        format!("high = {high} is below low = {low}"),
                    ));
                }
                Dist::Int {
                    low: low as i64,
                    high: high as i64,
                }
            }
        };
        Ok(dist)
    }
}

fn attr_value(ty: AttrType, v: &toml::Value) -> Result<AttrValue, ValueError> {
    let bad = || ValueError::AttrType {
        expected: ty.name(),
        got: v.type_str(),
    };
    Ok(match (ty, v) {
        (AttrType::Int, toml::Value::Integer(i)) => AttrValue::Int(*i),
        (AttrType::Float, toml::Value::Integer(i)) => AttrValue::Float(*i as f64),
        (AttrType::Float, toml::Value::Float(f)) => AttrValue::Float(*f),
        (AttrType::Bool, toml::Value::Boolean(b)) => AttrValue::Bool(*b),
        (AttrType::Str, toml::Value::String(s)) => AttrValue::Str(s.clone()),
        (AttrType::ListInt, toml::Value::Array(a)) => AttrValue::ListInt(
            a.iter()
                .map(|x| x.as_integer().ok_or_else(bad))
                .collect::<Result<_, _>>()?,
        ),
        (AttrType::ListFloat, toml::Value::Array(a)) => AttrValue::ListFloat(
            a.iter()
                .map(|x| match x {
                    toml::Value::Integer(i) => Ok(*i as f64),
                    toml::Value::Float(f) => Ok(*f),
                    _ => Err(bad()),
                })
                .collect::<Result<_, _>>()?,
        ),
        _ => return Err(bad()),
    })
}

/// Why a `specials` value is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
enum BadSpecials {
    /// An item of the list is not a string.
    #[error("expected special names ({}), got {got}", all_special_names())]
    NotAName {
        /// The item's TOML type.
        got: &'static str,
    },
    /// An item names no special value.
    #[error("unknown special `{name}`; expected {}", all_special_names())]
    Unknown {
        /// The item.
        name: String,
    },
    /// Neither a boolean nor a list.
    #[error(
        "expected true, false or a list of specials ({}), got {got}",
        all_special_names()
    )]
    NotAList {
        /// The value's TOML type.
        got: &'static str,
    },
}

fn all_special_names() -> String {
    Special::ALL.map(|s| s.name()).join(", ")
}

fn specials(v: &toml::Value) -> Result<Vec<Special>, BadSpecials> {
    match v {
        toml::Value::Boolean(true) => Ok(Special::ALL.to_vec()),
        toml::Value::Boolean(false) => Ok(Vec::new()),
        toml::Value::Array(items) => {
            let mut out = Vec::new();
            for item in items {
                let name = item.as_str().ok_or(BadSpecials::NotAName {
                    got: item.type_str(),
                })?;
                let s = Special::parse(name).ok_or_else(|| BadSpecials::Unknown {
                    name: name.to_string(),
                })?;
                if !out.contains(&s) {
                    out.push(s);
                }
            }
            out.sort();
            Ok(out)
        }
        other => Err(BadSpecials::NotAList {
            got: other.type_str(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"[op]
name = "add_custom"
level = 1
op_type = "AddCustom"

[[inputs]]
name = "x"
dtypes = ["float16", "float32"]

[[inputs]]
name = "y"
dtypes = ["float16", "float32"]
dtype = { same_as = "x" }

[[outputs]]
name = "z"
dtype = { same_as = "x" }

[[cases]]
name = "a"
shapes = [[8], [8]]
dtype = "float16"

[[cases]]
name = "b"
shapes = [[4, 4], [4, 4]]
dtype = "float32"
"#;

    fn err(text: &str) -> String {
        OpSpec::parse(
            text,
            Path::new("ops/add_custom/op.toml"),
            &crate::golden::testing::BUILTINS,
        )
        .unwrap_err()
        .to_string()
    }

    fn ok(text: &str) -> OpSpec {
        OpSpec::parse(
            text,
            Path::new("ops/add_custom/op.toml"),
            &crate::golden::testing::BUILTINS,
        )
        .unwrap()
    }

    #[test]
    fn the_chip_is_a_profile_name_or_absent() {
        assert_eq!(ok(BASE).chip, None);
        let with = BASE.replacen(
            "op_type = \"AddCustom\"\n",
            "op_type = \"AddCustom\"\nchip = \"ascend310b\"\n",
            1,
        );
        assert_ne!(with, BASE, "the replacement must hit");
        assert_eq!(ok(&with).chip.as_deref(), Some("ascend310b"));
        let bad = BASE.replacen(
            "op_type = \"AddCustom\"\n",
            "op_type = \"AddCustom\"\nchip = \"Ascend 310B\"\n",
            1,
        );
        let e = err(&bad);
        assert!(
            e.contains("op.chip") && e.contains("is not a chip profile name"),
            "{e}"
        );
    }

    #[test]
    fn an_output_dtype_mapped_from_an_input_by_a_table() {
        let text = r#"[op]
name = "is_finite_like"
level = 1
op_type = "IsFiniteLike"

[[inputs]]
name = "x"
dtypes = ["float16", "float32", "uint8"]

[[outputs]]
name = "y"
dtype = { by = "x", table = { float16 = "float16", float32 = "float16", uint8 = "float32" } }

[golden]
script = "golden.py"

[[cases]]
name = "h"
shapes = [[4]]
dtype = "float16"

[[cases]]
name = "f"
shapes = [[4]]
dtype = "float32"

[[cases]]
name = "u"
shapes = [[4]]
dtype = "uint8"
"#;
        let s = ok(text);
        let got: Vec<Dtype> = s.cases.iter().map(|c| c.outputs[0].dtype).collect();
        assert_eq!(got, [Dtype::Float16, Dtype::Float16, Dtype::Float32]);
        assert!(
            matches!(&s.outputs[0].rule, Some(DtypeRule::Map { input, table }) if input == "x" && table.len() == 3)
        );
        // A case whose input dtype the table lacks names it.
        let lacking = text.replace(", uint8 = \"float32\"", "");
        let e = err(&lacking);
        assert!(e.contains("has no uint8") && e.contains("cases[2]"), "{e}");
        // Both keys, an input, dtypes the input allows, outputs only.
        let e = err(&text.replace("by = \"x\", ", ""));
        assert!(e.contains("needs both keys"), "{e}");
        let e = err(&text.replace("by = \"x\"", "by = \"z\""));
        assert!(e.contains("`z` is not an input"), "{e}");
        let e = err(&text.replace("uint8 = \"float32\"", "int8 = \"float32\""));
        assert!(e.contains("does not allow int8"), "{e}");
        let e = err(&text.replace("by = \"x\", ", "same_as = \"x\", by = \"x\", "));
        assert!(e.contains("exactly one of"), "{e}");
        let bad = text.replace(
            "[[outputs]]",
            "[[inputs]]\nname = \"w\"\ndtypes = [\"float32\"]\ndtype = { by = \"x\", table = { uint8 = \"float32\" } }\n\n[[outputs]]",
        );
        assert!(err(&bad).contains("can only be same_as"), "{}", err(&bad));
    }

    #[test]
    fn complex64_inputs_and_the_real_of_rule() {
        let text = r#"[op]
name = "angle_v2"
level = 1
op_type = "AngleV2"

[[inputs]]
name = "x"
dtypes = ["float16", "complex64"]

[[outputs]]
name = "y"
dtype = { real_of = "x" }

[golden]
builtin = "angle_v2"

[[cases]]
name = "c"
shapes = [[5, 3]]
dtype = "complex64"
inputs = { x = { kind = "uniform", low = -1.0, high = 1.0 } }
specials = ["nan", "zero"]

[[cases]]
name = "h"
shapes = [[4]]
dtype = "float16"
"#;
        let s = ok(text);
        let c = &s.cases[0];
        assert_eq!(c.inputs[0].dtype, Dtype::Complex64);
        assert_eq!(c.outputs[0].dtype, Dtype::Float32);
        assert_eq!(c.outputs[0].tolerance, default_tolerance(Dtype::Float32));
        assert_eq!(s.cases[1].outputs[0].dtype, Dtype::Float16);
        // Parts are drawn from the distribution, specials included.
        let x = &crate::gen::gen_inputs(c, 7)[0];
        assert_eq!(
            (x.dtype, x.shape.clone(), x.data.len()),
            (Dtype::Complex64, vec![5, 3], 120)
        );
        let parts = x.complex_parts().unwrap();
        let values: Vec<f64> = (0..parts.numel()).map(|i| parts.get_f64(i)).collect();
        assert!(
            values.iter().all(|v| v.is_nan() || (-1.0..1.0).contains(v)),
            "{values:?}"
        );
        assert!(values.iter().any(|v| v.is_nan() || *v == 0.0), "{values:?}");
        // The rule is for outputs only.
        let bad = text.replace(
            "[[outputs]]",
            "[[inputs]]\nname = \"w\"\ndtypes = [\"float32\"]\ndtype = { real_of = \"x\" }\n\n[[outputs]]",
        );
        assert!(err(&bad).contains("can only be same_as"), "{}", err(&bad));
    }

    #[test]
    fn base_parses_with_defaults() {
        let s = ok(BASE);
        assert_eq!(s.kernel, "add_custom");
        assert!(matches!(&s.golden, GoldenSpec::Builtin(b) if b.name == "add_custom"));
        assert_eq!(s.cases.len(), 2);
        let b = &s.cases[1];
        assert_eq!(b.inputs[1].dtype, Dtype::Float32);
        assert_eq!(b.inputs[1].shape, vec![4, 4]);
        assert_eq!(
            b.inputs[0].dist,
            Dist::Mixed {
                scale: 1.0,
                sign: Sign::Any
            }
        );
        assert!(b.inputs[0].specials.is_empty());
        assert_eq!(b.outputs[0].dtype, Dtype::Float32);
        assert_eq!(
            b.outputs[0].tolerance,
            Tolerance {
                atol: 1e-4,
                rtol: 1e-4,
                max_mismatch_ratio: 0.0,
            }
        );
        assert_eq!(
            s.cases[0].outputs[0].tolerance,
            Tolerance {
                atol: 1e-3,
                rtol: 1e-3,
                max_mismatch_ratio: 0.0,
            }
        );
    }

    #[test]
    fn shape_count_mismatch() {
        let text = BASE.replace("shapes = [[4, 4], [4, 4]]", "shapes = [[16]]");
        assert_eq!(
            err(&text),
            "ops/add_custom/op.toml:26:1: cases[1].shapes: 1 shape given but the operator has 2 inputs"
        );
    }

    #[test]
    fn missing_field() {
        let text = BASE.replace("name = \"b\"\n", "");
        assert_eq!(
            err(&text),
            "ops/add_custom/op.toml:24:1: cases[1].name: missing field `name`"
        );
        let text = BASE.replace(
            "dtype = \"float32\"",
            "dtype = \"float32\"\ntolerance = { atol = 1e-3 }",
        );
        assert_eq!(
            err(&text),
            "ops/add_custom/op.toml:28:13: cases[1].tolerance.rtol: missing field `rtol`"
        );
        let text = BASE.replace("[op]", "[opp]");
        assert!(
            err(&text).starts_with("ops/add_custom/op.toml:1:2: opp: unknown field `opp`"),
            "{}",
            err(&text)
        );
        let text = BASE.replace("op_type = \"AddCustom\"\n", "");
        assert_eq!(
            err(&text),
            "ops/add_custom/op.toml:1:1: op.op_type: missing field `op_type`"
        );
    }

    #[test]
    fn unknown_key() {
        let text = BASE.replace("name = \"b\"\n", "name = \"b\"\nshape = [4]\n");
        let e = err(&text);
        assert!(
            e.starts_with("ops/add_custom/op.toml:26:1: cases[1].shape: unknown field `shape`, expected one of"),
            "{e}"
        );
        let text = BASE.replace("level = 1\n", "level = 1\nkernal = \"x\"\n");
        assert!(
            err(&text).starts_with("ops/add_custom/op.toml:4:1: op.kernal: unknown field `kernal`")
        );
        // Inside an inline table.
        let text = BASE.replace(
            "dtype = \"float32\"\n",
            "dtype = \"float32\"\ninputs = { x = { kind = \"uniform\", low = 0, hi = 1 } }\n",
        );
        let e = err(&text);
        assert!(e.starts_with("ops/add_custom/op.toml:28:"), "{e}");
        assert!(
            e.contains("cases[1].inputs.x.hi: unknown field `hi`"),
            "{e}"
        );
    }

    #[test]
    fn bad_dtype() {
        let text = BASE.replace(
            "dtypes = [\"float16\", \"float32\"]\n\n[[inputs]]",
            "dtypes = [\"float16\", \"float8\"]\n\n[[inputs]]",
        );
        let e = err(&text);
        assert!(e.starts_with("ops/add_custom/op.toml:8:22: inputs[0].dtypes[1]: unknown dtype `float8`; expected one of float16, bfloat16"), "{e}");
        let text = BASE.replace("dtype = \"float32\"", "dtype = \"int32\"");
        assert_eq!(
            err(&text),
            "ops/add_custom/op.toml:27:1: cases[1].dtype: int32 is not allowed for input `x` (allowed: float16, float32)"
        );
        let text = BASE.replace(
            "dtype = \"float32\"",
            "dtypes = { x = \"float32\", y = \"float16\" }",
        );
        assert_eq!(
            err(&text),
            "ops/add_custom/op.toml:27:27: cases[1].dtypes.y: input `y` must have the dtype of `x` (float32) but is float16"
        );
    }

    #[test]
    fn syntax_error_has_position() {
        let text = BASE.replace("level = 1", "level = = 1");
        let e = err(&text);
        assert!(e.starts_with("ops/add_custom/op.toml:3:9: "), "{e}");
    }

    #[test]
    fn wrong_value_type_has_path() {
        let text = BASE.replace("level = 1", "level = \"one\"");
        let e = err(&text);
        assert!(
            e.starts_with("ops/add_custom/op.toml:3:9: op.level: invalid type: string"),
            "{e}"
        );
        let text = BASE.replace("shapes = [[8], [8]]", "shapes = [[8], [-8]]");
        assert_eq!(
            err(&text),
            "ops/add_custom/op.toml:21:17: cases[0].shapes[1][0]: dimension -8 is negative"
        );
    }

    #[test]
    fn attrs_are_checked_and_defaulted() {
        let text = BASE.replace(
            "[[cases]]\nname = \"a\"",
            "[[attrs]]\nname = \"alpha\"\ntype = \"float\"\ndefault = 1\n\n[[attrs]]\nname = \"mode\"\ntype = \"str\"\nrequired = true\n\n[[cases]]\nname = \"a\"\nattrs = { mode = \"fast\", alpha = 2 }",
        );
        let text = text.replace("name = \"b\"", "name = \"b\"\nattrs = { mode = \"slow\" }");
        let s = ok(&text);
        assert_eq!(s.cases[0].attr("alpha"), Some(&AttrValue::Float(2.0)));
        assert_eq!(s.cases[1].attr("alpha"), Some(&AttrValue::Float(1.0)));
        assert_eq!(
            s.cases[1].attr("mode"),
            Some(&AttrValue::Str("slow".into()))
        );
        let bad = text.replace("attrs = { mode = \"slow\" }", "attrs = { mode = 3 }");
        assert!(
            err(&bad).ends_with("cases[1].attrs.mode: expected a value of type str, got integer")
        );
        let missing = text.replace("attrs = { mode = \"slow\" }\n", "");
        assert!(err(&missing).ends_with("cases[1]: required attr `mode` has no value in this case"));
        let unknown = text.replace(
            "attrs = { mode = \"slow\" }",
            "attrs = { mode = \"slow\", beta = 1 }",
        );
        assert!(err(&unknown).ends_with(
            "cases[1].attrs.beta: the operator has no attr `beta` (attrs: alpha, mode)"
        ));
    }

    #[test]
    fn output_rules_and_tolerances() {
        let text = BASE.replace("dtype = { same_as = \"x\" }\n\n[[cases]]", "\n[[cases]]");
        assert!(err(&text).contains("outputs[0]: output `z` needs a dtype rule"));
        let text = BASE.replace(
            "[[cases]]\nname = \"a\"",
            "[tolerance.float16]\natol = 1e-2\nrtol = 2e-2\n\n[[cases]]\nname = \"a\"",
        );
        let s = ok(&text);
        assert_eq!(
            s.cases[0].outputs[0].tolerance,
            Tolerance {
                atol: 1e-2,
                rtol: 2e-2,
                max_mismatch_ratio: 0.0,
            }
        );
        let text = BASE.replace(
            "dtype = \"float32\"",
            "dtype = \"float32\"\ntolerance = { atol = 0.5, rtol = 0.25 }",
        );
        assert_eq!(
            ok(&text).cases[1].outputs[0].tolerance,
            Tolerance {
                atol: 0.5,
                rtol: 0.25,
                max_mismatch_ratio: 0.0,
            }
        );
        let text = BASE.replace(
            "dtype = \"float32\"",
            "dtype = \"float32\"\ntolerance = { atol = -1.0, rtol = 0.25 }",
        );
        assert!(err(&text).contains("cases[1].tolerance.atol: atol = -1 must be finite and >= 0"));
        // A share of elements allowed to fail, per case or per dtype.
        let text = BASE.replace(
            "dtype = \"float32\"",
            "dtype = \"float32\"\ntolerance = { atol = 1e-3, rtol = 1e-3, max_mismatch_ratio = 0.001 }",
        );
        assert_eq!(
            ok(&text).cases[1].outputs[0].tolerance.max_mismatch_ratio,
            0.001
        );
        let text = BASE.replace(
            "[[cases]]\nname = \"a\"",
            "[tolerance.float16]\natol = 1e-3\nrtol = 1e-3\nmax_mismatch_ratio = 1.0\n\n[[cases]]\nname = \"a\"",
        );
        assert!(
            err(&text).contains("max_mismatch_ratio = 1 must be at least 0 and below 1"),
            "{}",
            err(&text)
        );
    }

    #[test]
    fn distributions_and_specials() {
        let text = BASE.replace(
            "dtype = \"float32\"",
            "dtype = \"float32\"\nspecials = [\"nan\", \"inf\"]\ninputs = { x = { kind = \"uniform\", low = -1, high = 2 }, y = { sign = \"positive\", specials = false } }",
        );
        let s = ok(&text);
        let c = &s.cases[1];
        assert_eq!(
            c.inputs[0].dist,
            Dist::Uniform {
                low: -1.0,
                high: 2.0
            }
        );
        assert_eq!(c.inputs[0].specials, vec![Special::Inf, Special::Nan]);
        assert_eq!(
            c.inputs[1].dist,
            Dist::Mixed {
                scale: 1.0,
                sign: Sign::Positive
            }
        );
        assert!(c.inputs[1].specials.is_empty());
        let bad = text.replace("low = -1, high = 2", "low = -1, mean = 2");
        assert!(err(&bad).contains(
            "cases[1].inputs.x.mean: `mean` does not apply to kind = \"uniform\" (keys: low, high)"
        ));
        let bad = text.replace("\"nan\", \"inf\"", "\"nan\", \"denormal\"");
        assert!(err(&bad).contains(
            "cases[1].specials: unknown special `denormal`; expected inf, nan, zero, huge, tiny"
        ));
        let bad = text.replace("inputs = { x", "inputs = { w");
        assert!(err(&bad).contains("cases[1].inputs.w: no input named `w` (inputs: x, y)"));
    }

    #[test]
    fn golden_and_names() {
        let text = format!("{BASE}\n[golden]\nbuiltin = \"nope\"\n");
        assert!(err(&text).contains(
            "golden.builtin: no builtin golden named `nope` (builtins: add_custom, muls"
        ));
        let text = format!("{BASE}\n[golden]\nscript = \"golden.py\"\n");
        assert_eq!(
            ok(&text).golden,
            GoldenSpec::Script(PathBuf::from("golden.py"))
        );
        let text = format!("{BASE}\n[golden]\nscript = \"../golden.py\"\n");
        assert!(err(&text)
            .contains("golden.script: `../golden.py` must be a relative path inside the package"));
        let text = BASE
            .replace("name = \"custom_op\"", "")
            .replace("name = \"add_custom\"", "name = \"my_op\"");
        assert!(err(&text).starts_with(
            "ops/add_custom/op.toml: no [golden] table and no builtin golden named `my_op`"
        ));
        let text = BASE.replace("name = \"b\"", "name = \"a\"");
        assert_eq!(
            err(&text),
            "ops/add_custom/op.toml:25:1: cases[1].name: case name `a` is used twice"
        );
        let text = BASE.replace("level = 1", "level = 4");
        assert_eq!(
            err(&text),
            "ops/add_custom/op.toml:3:1: op.level: level 4 is out of range; expected 1, 2 or 3"
        );
        let text = format!("{BASE}\n[tiling]\nconstraints = [\"A *\"]\n");
        assert!(err(&text).contains("tiling.constraints[0]: unexpected end of expression"));
    }
}
