//! Every YAML file rsop writes reads the same in a YAML 1.1 reader (`PyYAML`)
//! and a YAML 1.2 one (serde): no plain scalar such as `=`, `y`, `on`,
//! `~`, `<<` or `1:20` changes meaning between them.

use std::path::Path;

use crate::support::{rsop, yaml_files, yaml_reader_disagreements};

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

/// Names the user chooses stand alone as scalars in the scaffolded YAML: a
/// project named `no`, a kind `Yes` and a plural `on` are quoted there.
#[test]
fn scaffolded_names_that_yaml_1_1_misreads_are_quoted() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    rsop(
        dir,
        &["init", "--domain", "example.com", "--project-name", "no"],
    )
    .success();
    rsop(
        dir,
        &[
            "create",
            "api",
            "--group",
            "web",
            "--version",
            "v1",
            "--kind",
            "Yes",
            "--plural",
            "on",
        ],
    )
    .success();
    let files = yaml_files(dir);
    let problems = yaml_reader_disagreements(dir, &files);
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
    let sample = std::fs::read_to_string(dir.join("config/samples/web_v1_yes.yaml")).unwrap();
    assert!(
        sample.contains("kind: 'Yes'") && sample.contains("app.kubernetes.io/name: 'no'"),
        "{sample}"
    );
}
