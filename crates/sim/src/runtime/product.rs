//! The product family a launch runs on, where the guide's API rules differ
//! by product: most vector and cube rules of the simulator are the Atlas A2
//! tables (the 910B); a chip of another family is named in their faults,
//! and where the guide gives that family its own list, it applies.

use super::fault::Fault;
use ascendopt_op::Dtype;

/// A product family of the guide's "产品支持情况" tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Product {
    /// Atlas A2 training and inference products (Ascend 910B).
    #[default]
    AtlasA2,
    /// Atlas 200I/500 A2 inference products (Ascend 310B).
    Atlas200I500A2,
}

impl Product {
    /// The family of a SoC name (`Platform::soc_version`): the Ascend 310B
    /// parts are the Atlas 200I/500 A2; everything else the simulator
    /// models is an Atlas A2.
    pub fn of_soc(soc_version: &str) -> Product {
        if soc_version.starts_with("Ascend310B") {
            Product::Atlas200I500A2
        } else {
            Product::AtlasA2
        }
    }

    /// The guide's name of the family.
    pub fn name(self) -> &'static str {
        match self {
            Product::AtlasA2 => "Atlas A2",
            Product::Atlas200I500A2 => "Atlas 200I/500 A2",
        }
    }

    /// Duplicate's element types on this family (guide 6.2.3.3.8.1,
    /// Duplicate: the A2 list has bfloat16, the 200I/500 A2 list does not;
    /// neither has a one-byte type).
    pub fn duplicate_dtypes(self) -> &'static [Dtype] {
        use Dtype::*;
        match self {
            Product::AtlasA2 => &[Int16, Uint16, Float16, Bfloat16, Int32, Uint32, Float32],
            Product::Atlas200I500A2 => &[Int16, Uint16, Float16, Int32, Uint32, Float32],
        }
    }

    /// Checks Duplicate's element type against this family's list.
    pub fn check_duplicate(self, dtype: Dtype) -> Result<(), Fault> {
        let listed = self.duplicate_dtypes();
        if listed.contains(&dtype) {
            return Ok(());
        }
        let names: Vec<String> = listed.iter().map(|d| d.to_string()).collect();
        Err(Fault::Unsupported {
            api: "Duplicate",
            what: format!(
                "{dtype} on {} (the guide lists {})",
                self.name(),
                names.join(", ")
            ),
        })
    }

    /// A fault of a rule table the simulator keeps for the Atlas A2 only,
    /// raised on a chip of this family: it says so, so the message names
    /// the chip the package runs on.
    pub fn restate(self, fault: Fault) -> Fault {
        match (self, fault) {
            (Product::AtlasA2, f) => f,
            (p, Fault::Unsupported { api, what }) if what.contains("Atlas A2") => {
                Fault::Unsupported {
                    api,
                    what: format!(
                        "{what}; the chip is an {} and the simulator applies the Atlas A2 rule to it",
                        p.name()
                    ),
                }
            }
            (_, f) => f,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_310b_is_an_atlas_200i_500_a2_and_its_duplicate_list_has_no_bfloat16() {
        assert_eq!(Product::of_soc("Ascend310B1"), Product::Atlas200I500A2);
        assert_eq!(Product::of_soc("Ascend910B2"), Product::AtlasA2);
        assert_eq!(Product::of_soc(""), Product::AtlasA2);
        let p = Product::Atlas200I500A2;
        assert!(p.check_duplicate(Dtype::Float16).is_ok());
        let err = p.check_duplicate(Dtype::Bfloat16).unwrap_err().to_string();
        assert_eq!(
            err,
            "Duplicate does not support bfloat16 on Atlas 200I/500 A2 (the guide lists int16, \
             uint16, float16, int32, uint32, float32)"
        );
        let err = p.check_duplicate(Dtype::Uint8).unwrap_err().to_string();
        assert!(err.contains("uint8 on Atlas 200I/500 A2"), "{err}");
        assert!(Product::AtlasA2.check_duplicate(Dtype::Bfloat16).is_ok());
    }

    #[test]
    fn an_a2_rule_raised_on_another_family_names_that_family() {
        let f = Fault::Unsupported {
            api: "ReduceSum",
            what: "int32 on Atlas A2 (half, float)".into(),
        };
        let s = Product::Atlas200I500A2.restate(f).to_string();
        assert!(s.contains("the chip is an Atlas 200I/500 A2"), "{s}");
        let f = Fault::Unsupported {
            api: "ReduceSum",
            what: "int32 on Atlas A2 (half, float)".into(),
        };
        assert_eq!(
            Product::AtlasA2.restate(f).to_string(),
            "ReduceSum does not support int32 on Atlas A2 (half, float)"
        );
    }
}
