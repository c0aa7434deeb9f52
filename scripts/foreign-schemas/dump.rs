//! Prints, as JSON, the schema schemars gives each type it knows through an
//! optional feature (`chrono04`, `uuid1`, ...), under kube-derive's settings
//! (openapi3, every subschema inlined, no meta schema, the Deserialize
//! contract) and before any transform, as `subschema_for` returns it inside
//! a `#[derive(JsonSchema)]` struct. Built by `scripts/foreign-schemas.sh`.
//!
//! `types` are the leaf types rsop looks up by path; each lists every Rust
//! type it stands for (the alias `chrono::Duration`, `DateTime` under every
//! time zone, both smol_str lines), which must all give one schema: rsop
//! ignores those type parameters. `instances` are generic containers at
//! concrete arguments, which rsop derives with its own type logic and a test
//! compares with what is recorded here.

use std::collections::BTreeMap;

use schemars::generate::{SchemaGenerator, SchemaSettings};
use serde_json::{Value, json};

fn main() {
    let mut generator: SchemaGenerator = SchemaSettings::openapi3()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut types: BTreeMap<&str, Value> = BTreeMap::new();
    let mut instances: BTreeMap<String, Value> = BTreeMap::new();

    macro_rules! types {
        ($($feature:literal { $($key:literal => $($ty:ty),+;)* })*) => {{
            $($(
                let schemas = [$(generator.subschema_for::<$ty>().to_value()),+];
                assert!(
                    schemas.iter().all(|s| *s == schemas[0]),
                    "the types of `{}` give different schemas",
                    $key
                );
                let old = types.insert(
                    $key,
                    json!({ "feature": $feature, "schema": schemas[0] }),
                );
                assert!(old.is_none(), "`{}` is listed twice", $key);
            )*)*
        }};
    }
    macro_rules! instances {
        ($($ty:ty),* $(,)?) => {{
            $(
                // One line, whatever rustc's pretty-printer wraps.
                instances.insert(
                    stringify!($ty).split_whitespace().collect::<Vec<_>>().join(" "),
                    generator.subschema_for::<$ty>().to_value(),
                );
            )*
        }};
    }

    // Every type of schemars' json_schema_impls/{chrono04, jiff02, uuid1,
    // url2, semver1, bytes1, decimal, arrayvec07}.rs and the smol_str
    // forwards of json_schema_impls/mod.rs whose schema does not depend on
    // type arguments.
    types! {
        "chrono04" {
            "chrono::DateTime" => chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::FixedOffset>;
            "chrono::NaiveDate" => chrono::NaiveDate;
            "chrono::NaiveDateTime" => chrono::NaiveDateTime;
            "chrono::NaiveTime" => chrono::NaiveTime;
            "chrono::TimeDelta" => chrono::TimeDelta;
            "chrono::Duration" => chrono::Duration;
            "chrono::Weekday" => chrono::Weekday;
        }
        "jiff02" {
            "jiff::Timestamp" => jiff::Timestamp;
            "jiff::Zoned" => jiff::Zoned;
            "jiff::Span" => jiff::Span;
            "jiff::SignedDuration" => jiff::SignedDuration;
            "jiff::civil::Date" => jiff::civil::Date;
            "jiff::civil::DateTime" => jiff::civil::DateTime;
            "jiff::civil::Time" => jiff::civil::Time;
        }
        "uuid1" {
            "uuid::Uuid" => uuid::Uuid;
        }
        "url2" {
            "url::Url" => url::Url;
        }
        "semver1" {
            "semver::Version" => semver::Version;
        }
        "bytes1" {
            "bytes::Bytes" => bytes::Bytes;
            "bytes::BytesMut" => bytes::BytesMut;
        }
        "rust_decimal1" {
            "rust_decimal::Decimal" => rust_decimal::Decimal;
        }
        "bigdecimal04" {
            "bigdecimal::BigDecimal" => bigdecimal::BigDecimal;
        }
        "smol_str02, smol_str03" {
            "smol_str::SmolStr" => smol_str02::SmolStr, smol_str03::SmolStr;
        }
        "arrayvec07" {
            "arrayvec::ArrayString" => arrayvec::ArrayString<1>, arrayvec::ArrayString<64>;
        }
    }

    // The generic containers (json_schema_impls/{indexmap2, arrayvec07,
    // either1}.rs and the smallvec forward), with arguments that exercise
    // each branch of rsop's logic: string, integer and enum-like keys,
    // optional and nested items, a zero capacity.
    instances! {
        indexmap::IndexMap<String, i32>,
        indexmap::IndexMap<u16, Option<String>>,
        indexmap::IndexMap<i64, Vec<bool>>,
        indexmap::IndexMap<chrono::Weekday, u8>,
        indexmap::IndexMap<String, chrono::DateTime<chrono::Utc>, std::hash::RandomState>,
        indexmap::IndexSet<String>,
        indexmap::IndexSet<uuid::Uuid>,
        smallvec::SmallVec<[u8; 4]>,
        smallvec::SmallVec<[Option<url::Url>; 2]>,
        arrayvec::ArrayVec<u8, 4>,
        arrayvec::ArrayVec<String, 0>,
        arrayvec::ArrayVec<jiff::Timestamp, 16>,
        either::Either<String, i64>,
        either::Either<chrono::NaiveDate, Option<uuid::Uuid>>,
        either::Either<Vec<String>, indexmap::IndexMap<String, bool>>,
        Option<chrono::DateTime<chrono::Utc>>,
        Option<chrono::Weekday>,
        Option<chrono::TimeDelta>,
        Option<bytes::Bytes>,
        Option<rust_decimal::Decimal>,
        Option<semver::Version>,
        Option<either::Either<String, i64>>,
        Vec<uuid::Uuid>,
        std::collections::BTreeMap<String, url::Url>,
    }

    let out = json!({
        "schemars": env!("SCHEMARS_VERSION"),
        "crates": serde_json::from_str::<Value>(env!("FOREIGN_CRATES")).unwrap(),
        "types": types,
        "instances": instances,
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap());
}
