//! Packs the dumps of `dump.rs` into the one file rsop embeds.
//!
//! Usage: `pack SCHEMARS_VERSION OUT [KEEP] < lines`, each line
//! `K8S_OPENAPI_VERSION FEATURE EARLIEST LATEST DUMP_FILE`. With `KEEP`
//! (a file this program wrote), its versions that no line names are
//! packed too, so that adding a k8s-openapi release rebuilds only it.
//!
//! Most definitions are identical from one Kubernetes version to the next,
//! so each distinct schema is stored once in `pool`, and every version
//! maps names to pool indices. Names are stored once too (`type_names`,
//! `definition_names`, sorted for binary search); a version's `types` and
//! `definitions` are arrays parallel to them, `null` where the version has
//! no such name. The pool is ordered by name, so the variants of one
//! definition sit next to each other and gzip's window finds what they
//! share. The result is minified JSON, gzipped.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, Write};

use serde_json::{Value, json};

struct Dump {
    k8s_openapi: String,
    feature: String,
    earliest: String,
    latest: String,
    types: BTreeMap<String, Value>,
    definitions: BTreeMap<String, Value>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (schemars, out, keep) = match args.as_slice() {
        [_, schemars, out] => (schemars, out, None),
        [_, schemars, out, keep] => (schemars, out, Some(keep)),
        _ => panic!("usage: pack SCHEMARS_VERSION OUT [KEEP] < lines"),
    };
    let mut dumps: Vec<Dump> = Vec::new();
    for line in std::io::stdin().lock().lines() {
        let line = line.unwrap();
        let [k8s_openapi, feature, earliest, latest, file] =
            line.split_whitespace().collect::<Vec<_>>()[..]
        else {
            panic!("bad input line `{line}`");
        };
        let text = std::fs::read_to_string(file).unwrap();
        let mut value: Value = serde_json::from_str(&text).unwrap();
        let table = |v: &mut Value, key: &str| -> BTreeMap<String, Value> {
            serde_json::from_value(v[key].take()).unwrap()
        };
        dumps.push(Dump {
            k8s_openapi: k8s_openapi.into(),
            feature: feature.into(),
            earliest: earliest.into(),
            latest: latest.into(),
            types: table(&mut value, "types"),
            definitions: table(&mut value, "definitions"),
        });
    }

    if let Some(keep) = keep {
        let named: BTreeSet<(String, String)> = dumps
            .iter()
            .map(|d| (d.k8s_openapi.clone(), d.feature.clone()))
            .collect();
        dumps.extend(
            unpack(keep)
                .into_iter()
                .filter(|d| !named.contains(&(d.k8s_openapi.clone(), d.feature.clone()))),
        );
    }

    // Oldest first, whatever order the script built them in.
    let number = |s: &str| -> Vec<u32> {
        s.trim_start_matches("v1_")
            .split(['.', '_'])
            .map(|n| n.parse().unwrap())
            .collect()
    };
    dumps.sort_by_key(|d| (number(&d.k8s_openapi), number(&d.feature)));

    let type_names: Vec<&String> = dumps
        .iter()
        .flat_map(|d| d.types.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let definition_names: Vec<&String> = dumps
        .iter()
        .flat_map(|d| d.definitions.keys())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();

    let mut pool: Vec<String> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut intern = |schema: &Value| -> usize {
        let text = schema.to_string();
        *index.entry(text.clone()).or_insert_with(|| {
            pool.push(text);
            pool.len() - 1
        })
    };
    // Name by name, version by version: see the module comment.
    let mut definitions: Vec<Vec<Value>> = vec![Vec::new(); dumps.len()];
    for name in &definition_names {
        for (i, d) in dumps.iter().enumerate() {
            definitions[i].push(d.definitions.get(*name).map_or(Value::Null, |s| json!(intern(s))));
        }
    }
    let mut types: Vec<Vec<Value>> = vec![Vec::new(); dumps.len()];
    for name in &type_names {
        for (i, d) in dumps.iter().enumerate() {
            types[i].push(d.types.get(*name).map_or(Value::Null, |s| json!(intern(s))));
        }
    }

    let versions: Vec<Value> = dumps
        .iter()
        .zip(types.into_iter().zip(definitions))
        .map(|(d, (types, definitions))| {
            json!({
                "k8s_openapi": d.k8s_openapi,
                "feature": d.feature,
                "earliest": d.earliest,
                "latest": d.latest,
                "types": types,
                "definitions": definitions,
            })
        })
        .collect();
    let data = json!({
        // For the record: the schemas are what this schemars emits.
        "schemars": schemars,
        "type_names": type_names,
        "definition_names": definition_names,
        "versions": versions,
        // Schemas as JSON values, not strings: no escaping, and rsop reads
        // each as a raw value it parses only when asked for.
        "pool": pool.iter().map(|t| serde_json::from_str(t).unwrap()).collect::<Vec<Value>>(),
    });
    let text = data.to_string();
    let file = std::fs::File::create(out).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(file, flate2::Compression::best());
    encoder.write_all(text.as_bytes()).unwrap();
    encoder.finish().unwrap();
    eprintln!(
        "{} versions, {} distinct schemas, {} bytes of JSON",
        dumps.len(),
        pool.len(),
        text.len()
    );
}

/// The versions of a file `main` wrote, as the dumps they were packed from.
fn unpack(path: &str) -> Vec<Dump> {
    let file = std::fs::File::open(path).unwrap();
    let data: Value = serde_json::from_reader(flate2::read::GzDecoder::new(file)).unwrap();
    let names = |key: &str| -> Vec<String> { serde_json::from_value(data[key].clone()).unwrap() };
    let (type_names, definition_names) = (names("type_names"), names("definition_names"));
    let pool = data["pool"].as_array().unwrap();
    let table = |names: &[String], indices: &Value| -> BTreeMap<String, Value> {
        names
            .iter()
            .zip(indices.as_array().unwrap())
            .filter_map(|(name, index)| {
                let index = usize::try_from(index.as_u64()?).unwrap();
                Some((name.clone(), pool[index].clone()))
            })
            .collect()
    };
    data["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| Dump {
            k8s_openapi: v["k8s_openapi"].as_str().unwrap().into(),
            feature: v["feature"].as_str().unwrap().into(),
            earliest: v["earliest"].as_str().unwrap().into(),
            latest: v["latest"].as_str().unwrap().into(),
            types: table(&type_names, &v["types"]),
            definitions: table(&definition_names, &v["definitions"]),
        })
        .collect()
}
