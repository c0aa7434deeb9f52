//! Every YAML file rsop writes reads the same in a YAML 1.1 reader (PyYAML)
//! and a YAML 1.2 one (serde): no plain scalar such as `=`, `y`, `on`,
//! `~`, `<<` or `1:20` changes meaning between them.

use std::path::Path;

use crate::support::{yaml_files, yaml_reader_disagreements};

/// The golden trees and the manifest cases' expected trees are, byte for
/// byte, what the suite makes rsop write (the tests that own them compare
/// them with rsop's output); the `yaml-1-1-scalars` case holds keys and
/// enum values that YAML 1.1 reads differently when unquoted.
#[test]
fn every_written_yaml_file_reads_alike_in_pyyaml_and_serde() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = yaml_files(&root.join("tests/golden"));
    for case in std::fs::read_dir(root.join("tests/manifests")).unwrap() {
        files.extend(yaml_files(&case.unwrap().path().join("expected")));
    }
    assert!(
        files
            .iter()
            .any(|f| f.to_str().unwrap().contains("yaml-1-1-scalars")),
        "the YAML 1.1 manifest case is missing"
    );
    assert!(files.len() > 50, "too few YAML files found: {files:?}");
    let problems = yaml_reader_disagreements(root, &files);
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
