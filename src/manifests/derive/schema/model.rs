//! Which releases of schemars and kube-core the static derivation follows.
//!
//! kube-derive's `crd()` is schemars' output for the root type, run through
//! the transforms kube-derive names and kube-core implements. Both moved
//! between releases, so a CRD is only right for the releases the project
//! locks. rsop keeps a model of each release line whose output it has
//! checked against the real crates (the conformance tests build the fixture
//! under each), and sends a kind to the crdgen build under any other
//! release, rather than guessing.
//!
//! kube-core (kube-derive is released with it, at the same version):
//! - 0.70: schemars 0.8's openapi3 visitors and the
//!   `StructuralSchemaRewriter` on schemars' typed schemas, no `AddNullable`
//!   (schemars 0.8 writes `nullable` itself). That first rewriter hoists
//!   only the properties of a `oneOf`'s object variants (externally tagged
//!   enums) and panics when two variants name one property; the `enum`
//!   variants of documented unit enums stay in `oneOf`, untagged enums stay
//!   an `anyOf`, and `uniqueItems` stays.
//! - 0.71 to 0.75: also, a `true` `additionalProperties` beside properties
//!   (a flattened map) becomes `x-kubernetes-preserve-unknown-fields: true`.
//! - 0.76 to 0.90: also hoists untagged variants' properties and unit
//!   variants' `enum` values; a property two variants give the same schema
//!   is no longer a panic.
//! - 0.91 to 1.1: the same, and `uniqueItems` is dropped everywhere.
//! - 2.0: schemars' openapi3 transforms and `StructuralSchemaRewriter`.
//! - 3.0.0: adds `OptionalEnum` (`anyOf: [<enum>, null]` of an `Option`
//!   flattened into the enum plus `nullable`, only where the `anyOf` is the
//!   field's only keyword) and `OptionalIntOrString` (`nullable` on optional
//!   int-or-string properties).
//! - 3.0.1: `OptionalEnum` also where the field has a description, and
//!   `additionalProperties: false` next to `properties` is dropped.
//! - 3.1 to 5.0: `OptionalEnum` for every `Option` whose `anyOf` is a
//!   schema and null, untagged variants' descriptions no longer pushed into
//!   their properties, and the type and metadata of plain variants dropped.
//! - Before 4.2, kube-derive's `crd()` carries empty `categories`,
//!   `shortNames`, `additionalPrinterColumns` and `subresources`; before
//!   4.0, the title of a kind with root validation rules ends in `Validated`.
//!
//! schemars 0.8 (kube 0.70 to 1.1): `Option<T>` is `T` with
//! `nullable: true`, unsigned integers have only `minimum: 0.0`, maps are
//! `additionalProperties` whatever their key, `required` is sorted, the
//! lines of a doc comment's paragraph are joined with spaces, and
//! `flatten` merges schemas its own way.
//!
//! schemars 1:
//! - 1.0: a flattened enum keeps the enum's own schema, which serde does
//!   not write; rsop does not model it and builds such a kind.
//! - 1.1: flattened enums as serde writes them (unit variants as
//!   `{"Name": null}` objects, `Option` of a flattened enum as an `anyOf`
//!   with `{}`).
//! - 1.2: a map keyed by a string enum lists its keys as `properties`.

use std::fmt;

/// A kube-core release line with its own transforms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KubeCore {
    V0_70,
    V0_71,
    V0_76,
    V0_91,
    V2_0,
    V3_0_0,
    V3_0_1,
    V3_1,
}

/// A schemars release line with its own output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Schemars {
    V0_8,
    V1_0,
    V1_1,
    V1_2,
}

/// The releases whose output the static derivation reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Model {
    pub kube_core: KubeCore,
    pub schemars: Schemars,
    /// kube-derive before 4.2 builds `crd()` from JSON that always holds
    /// `categories`, `shortNames`, `additionalPrinterColumns` and
    /// `subresources`, so the CRD carries them empty; 4.2 builds the typed
    /// CRD and leaves them out.
    pub empty_lists: bool,
}

impl Default for Model {
    /// The newest releases: what rsop scaffolds.
    fn default() -> Self {
        Model {
            kube_core: KubeCore::V3_1,
            schemars: Schemars::V1_2,
            empty_lists: false,
        }
    }
}

/// Whether kube-derive `version` writes a CRD's empty lists (see
/// [`Model::empty_lists`]).
pub fn writes_empty_lists(version: &str) -> bool {
    release(version).is_some_and(|r| r < (4, 2, 0))
}

/// A release rsop has no model of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmodelled {
    pub krate: &'static str,
    pub version: String,
}

impl fmt::Display for Unmodelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let known = match self.krate {
            "schemars" => "schemars 0.8 and 1.0 to 1.2",
            _ => "kube 0.70 to 5.0",
        };
        write!(
            f,
            "rsop has no model of {} {}: it derives CRDs statically for {known}",
            self.krate, self.version
        )
    }
}

/// `major.minor.patch` of a release as Cargo.lock writes it; `None` for a
/// pre-release or anything else.
pub fn release(version: &str) -> Option<(u64, u64, u64)> {
    let mut parts = version.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    let patch = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((major, minor, patch))
}

impl KubeCore {
    /// The model of kube-core `version`.
    pub fn of(version: &str) -> Result<KubeCore, Unmodelled> {
        let unmodelled = || Unmodelled {
            krate: "kube",
            version: version.to_string(),
        };
        Ok(match release(version).ok_or_else(unmodelled)? {
            (0, 70, _) => KubeCore::V0_70,
            (0, 71..=75, _) => KubeCore::V0_71,
            (0, 76..=90, _) => KubeCore::V0_76,
            (0, 91..=99, _) | (1, 0..=1, _) => KubeCore::V0_91,
            (2, 0, _) => KubeCore::V2_0,
            (3, 0, 0) => KubeCore::V3_0_0,
            (3, 0, _) => KubeCore::V3_0_1,
            (3, 1, _) | (4, 0..=2, _) | (5, 0, _) => KubeCore::V3_1,
            _ => return Err(unmodelled()),
        })
    }
}

impl KubeCore {
    /// A release of the schemars 0.8 era (kube 0.70 to 1.1).
    pub fn is_legacy(self) -> bool {
        self < KubeCore::V2_0
    }
}

impl Schemars {
    /// The model of schemars `version`.
    pub fn of(version: &str) -> Result<Schemars, Unmodelled> {
        let unmodelled = || Unmodelled {
            krate: "schemars",
            version: version.to_string(),
        };
        Ok(match release(version).ok_or_else(unmodelled)? {
            (0, 8, 6..) => Schemars::V0_8,
            (1, 0, _) => Schemars::V1_0,
            (1, 1, _) => Schemars::V1_1,
            (1, 2, _) => Schemars::V1_2,
            _ => return Err(unmodelled()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn releases_map_to_their_lines() {
        assert_eq!(KubeCore::of("2.0.1"), Ok(KubeCore::V2_0));
        assert_eq!(KubeCore::of("3.0.0"), Ok(KubeCore::V3_0_0));
        assert_eq!(KubeCore::of("3.0.1"), Ok(KubeCore::V3_0_1));
        assert_eq!(KubeCore::of("3.1.0"), Ok(KubeCore::V3_1));
        assert_eq!(KubeCore::of("4.2.0"), Ok(KubeCore::V3_1));
        assert_eq!(KubeCore::of("5.0.0"), Ok(KubeCore::V3_1));
        assert_eq!(KubeCore::of("0.70.0"), Ok(KubeCore::V0_70));
        assert_eq!(KubeCore::of("0.71.0"), Ok(KubeCore::V0_71));
        assert_eq!(KubeCore::of("0.75.0"), Ok(KubeCore::V0_71));
        assert_eq!(KubeCore::of("0.76.0"), Ok(KubeCore::V0_76));
        assert_eq!(KubeCore::of("0.82.2"), Ok(KubeCore::V0_76));
        assert_eq!(KubeCore::of("0.85.0"), Ok(KubeCore::V0_76));
        assert_eq!(KubeCore::of("0.90.0"), Ok(KubeCore::V0_76));
        assert_eq!(KubeCore::of("0.91.0"), Ok(KubeCore::V0_91));
        assert_eq!(KubeCore::of("0.99.0"), Ok(KubeCore::V0_91));
        assert_eq!(KubeCore::of("1.1.0"), Ok(KubeCore::V0_91));
        for unknown in ["0.69.1", "1.2.0", "5.1.0", "6.0.0", "5.0.0-rc.1"] {
            assert!(KubeCore::of(unknown).is_err(), "{unknown}");
        }
        assert!(writes_empty_lists("3.1.0") && writes_empty_lists("4.0.0"));
        assert!(!writes_empty_lists("4.2.0") && !writes_empty_lists("5.0.0"));
        assert_eq!(Schemars::of("1.0.4"), Ok(Schemars::V1_0));
        assert_eq!(Schemars::of("1.1.0"), Ok(Schemars::V1_1));
        assert_eq!(Schemars::of("1.2.3"), Ok(Schemars::V1_2));
        assert_eq!(Schemars::of("0.8.22"), Ok(Schemars::V0_8));
        assert_eq!(Schemars::of("0.8.6"), Ok(Schemars::V0_8));
        for unknown in ["0.8.5", "0.9.0", "1.3.0", "1.0.0-rc.2"] {
            assert!(Schemars::of(unknown).is_err(), "{unknown}");
        }
        assert_eq!(
            Schemars::of("0.9.0").unwrap_err().to_string(),
            "rsop has no model of schemars 0.9.0: it derives CRDs statically for schemars 0.8 and 1.0 to 1.2"
        );
    }
}
