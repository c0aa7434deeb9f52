//! `rsop rbac` on a look-alike of a real operator (`tests/fixtures/rbac-shipped`):
//! a workspace whose kind lives in a sibling crate, a binary with a
//! `bootstrap` subcommand run by a Job under its own account and a `run`
//! subcommand run by a kustomize Deployment and a Helm chart's, a generic
//! wrapper around `Api<K>`, two structs with an `api` field of different
//! kinds, and a literal `ApiResource`. The kustomize role lacks one verb
//! and grants one rule no call needs; the chart's role lacks another verb.
//! Charts are rendered by the real Helm engine (helm-python-sdk behind a
//! `helm` on PATH), and read from their templates without one.

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::{copy_tree, refusal_problems_with_env, rsop_with_env};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-shipped")
}

/// A PATH with a `helm` that renders charts with the real Helm engine, or
/// (`None`) one with no `helm` at all.
fn path_with_helm(shim: Option<&Path>) -> OsString {
    let current = std::env::var_os("PATH").unwrap_or_default();
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&current)
        .filter(|d| !d.join("helm").is_file())
        .collect();
    if let Some(shim) = shim {
        let tool = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tools/helm_chart.py");
        // `helm template NAME CHART --namespace NS [--set-string K=V]..`, as rsop runs it.
        let script = format!(
            "#!/bin/sh\n[ \"$1\" = template ] || exit 64\nrelease=$2 chart=$3 namespace=$5\nshift 5\nexec python3 '{}' render \"$chart\" --release \"$release\" --namespace \"$namespace\" \"$@\"\n",
            tool.display()
        );
        let helm = shim.join("helm");
        std::fs::write(&helm, script).unwrap();
        std::fs::set_permissions(&helm, std::fs::Permissions::from_mode(0o755)).unwrap();
        dirs.insert(0, shim.to_path_buf());
    }
    std::env::join_paths(dirs).unwrap()
}

/// Each finding of the text report as `severity location: message | help`,
/// the message cut before its ", which" (the account and workload).
fn findings(stdout: &str) -> Vec<String> {
    let mut out = Vec::new();
    for block in stdout.split("\n\n") {
        let mut lines = block
            .lines()
            .filter(|l| !l.starts_with("note: read") && !l.starts_with("note: no `helm`"));
        let Some(head) = lines.next() else { continue };
        let Some((severity, message)) = head.split_once(": ") else {
            continue;
        };
        if !matches!(severity, "error" | "warning" | "note") {
            continue;
        }
        let message = message.split(", which").next().unwrap_or(message);
        let mut location = String::new();
        let mut help = String::new();
        for line in lines {
            if let Some(at) = line.trim().strip_prefix("--> ") {
                location = at.to_string();
            } else if let Some(h) = line.trim().strip_prefix("help: ") {
                help = h.to_string();
            }
        }
        out.push(format!("{severity} {location}: {message} | {help}"));
    }
    out
}

/// What the fixture's two installations lack, with the chart's role at
/// `chart_role` (its name as the chart renders it, or its template action).
fn expected(chart_role: &str) -> Vec<String> {
    vec![
        format!(
            "error operator/src/controller.rs:56:38: `ctx.settings.api.get` sends `get` on `configmaps` | add the rule `{{apiGroups: [\"\"], resources: [\"configmaps\"], verbs: [\"get\"]}}` to the ClusterRole `{chart_role}` at charts/widget-operator/templates/rbac.yaml:7:1"
        ),
        "error operator/src/store.rs:30:18: `self.api.delete (from `remove` at operator/src/controller.rs:63)` sends `delete` on `secrets` | add `delete` to the verbs of the rule at config/rbac/role.yaml:9:1".to_string(),
        "warning config/rbac/role.yaml:12:1: this rule of the ClusterRole `manager-role` grants `list` on `pods` that no request of the programs bound to it needs | remove what no call needs (least privilege)".to_string(),
        // An audited build's requests are not asked of the roles, and the
        // rule one of them needs is not unused either.
        "note operator/src/controller.rs:79:26: `ctx.settings.api.list` of `widget-operator run` sends `list` on `configmaps` only in a build with `cfg(feature = \"audit\")` | ".to_string(),
        "note operator/src/controller.rs:81:16: `leases.list` of `widget-operator run` sends `list` on `leases` of `coordination.k8s.io` only in a build with `cfg(feature = \"audit\")` | ".to_string(),
    ]
}

#[test]
fn shipped_roles_are_checked_against_the_program_each_workload_runs() {
    let shim = tempfile::tempdir().unwrap();
    for (helm, chart_role, read) in [
        (
            Some(shim.path()),
            "rsop-rbac-widget-operator",
            "note: read the Helm chart `charts/widget-operator` as",
        ),
        (
            None,
            "{{ include \"widget-operator.fullname\" . }}",
            "note: no `helm` on PATH: read the templates of the Helm chart `charts/widget-operator` as written",
        ),
    ] {
        let run = rsop_with_env(&fixture(), &["rbac"], &[("PATH", path_with_helm(helm))]);
        assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
        assert!(run.stdout.starts_with(read), "{}", run.stdout);
        assert_eq!(
            findings(&run.stdout),
            expected(chart_role),
            "{}",
            run.stdout
        );
        // The bootstrap subcommand is checked apart, under its own account:
        // its CRD requests are not the manager's, and the manager's are not
        // its own.
        let summary = run.stdout.lines().last().unwrap();
        assert!(
            summary.starts_with(
                "rbac: `widget-operator bootstrap` as Job `bootstrap` (2 requests checked, 0 not checked); \
                 `widget-operator run` as Deployment `controller-manager` (11 requests checked, 0 not checked, \
                 2 only in builds with a `cfg` off by default); `widget-operator run` as Deployment "
            ) && summary.ends_with(
                "(11 requests checked, 0 not checked, 2 only in builds with a `cfg` off by default); 2 errors, 1 warning"
            ),
            "{summary}"
        );
    }
}

#[test]
fn findings_are_workflow_annotations_and_sarif() {
    let shim = tempfile::tempdir().unwrap();
    let env = [("PATH", path_with_helm(Some(shim.path())))];
    let run = rsop_with_env(&fixture(), &["rbac", "--format", "github"], &env);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let annotations: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| !l.starts_with("::notice title"))
        .map(|l| l.split("::").nth(1).unwrap_or_default())
        .collect();
    assert_eq!(
        annotations,
        [
            "error file=operator/src/controller.rs,line=56,col=38,title=rsop rbac",
            "error file=operator/src/store.rs,line=30,col=18,title=rsop rbac",
            "warning file=config/rbac/role.yaml,line=12,col=1,title=rsop rbac",
            "notice file=operator/src/controller.rs,line=79,col=26,title=rsop rbac",
            "notice file=operator/src/controller.rs,line=81,col=16,title=rsop rbac",
        ]
    );
    // A message's line breaks are escaped, as the runner reads them.
    assert!(
        run.stdout.contains("%0Ahelp: add `delete` to the verbs"),
        "{}",
        run.stdout
    );

    let run = rsop_with_env(&fixture(), &["rbac", "--format", "sarif"], &env);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let log: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(log["version"], "2.1.0");
    let results = log["runs"][0]["results"].as_array().unwrap();
    let found: Vec<(String, String, String, u64)> = results
        .iter()
        .map(|r| {
            let at = &r["locations"][0]["physicalLocation"];
            (
                r["ruleId"].as_str().unwrap().to_string(),
                r["level"].as_str().unwrap().to_string(),
                at["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                at["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    let row = |rule: &str, level: &str, uri: &str, line| {
        (rule.to_string(), level.to_string(), uri.to_string(), line)
    };
    assert_eq!(
        found,
        [
            row(
                "ungranted-request",
                "error",
                "operator/src/controller.rs",
                56
            ),
            row("ungranted-request", "error", "operator/src/store.rs", 30),
            row("unused-rule", "warning", "config/rbac/role.yaml", 12),
            row("gated-request", "note", "operator/src/controller.rs", 79),
            row("gated-request", "note", "operator/src/controller.rs", 81),
        ]
    );
    // Every result's rule is declared by the tool.
    let rules: Vec<&str> = log["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert!(
        found
            .iter()
            .all(|(rule, ..)| rules.contains(&rule.as_str()))
    );
}

#[test]
fn a_role_file_that_cannot_be_read_is_an_error_and_a_chart_that_does_not_render_a_note() {
    let shim = tempfile::tempdir().unwrap();
    let env = [("PATH", path_with_helm(Some(shim.path())))];
    let broken = |file: &str, edit: &dyn Fn(&str) -> String| {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(&fixture(), dir.path(), None);
        let path = dir.path().join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, edit(&text)).unwrap();
        dir
    };
    // A role file that is not YAML: an error at its line, and nothing else
    // is reported as checked.
    let dir = broken("config/rbac/role.yaml", &|t| {
        t.replace("    verbs: [get, list]\n", "    verbs: [get, list\n")
    });
    let problems = refusal_problems_with_env(
        dir.path(),
        &["rbac"],
        &env,
        1,
        &["config/rbac/role.yaml:", "this RBAC file is not valid YAML"],
    );
    assert!(problems.is_none(), "{}", problems.unwrap());
    let run = rsop_with_env(dir.path(), &["rbac"], &env);
    assert!(run.stdout.is_empty(), "{}", run.stdout);

    // A chart that does not render: a note naming it and helm's reason, and
    // the chart read as written, so nothing else is lost.
    let dir = broken("charts/widget-operator/templates/deployment.yaml", &|t| {
        t.replace("args: [run]", "args: [run, {{ .Values.missing.key }}]")
    });
    let run = rsop_with_env(dir.path(), &["rbac"], &env);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with(
            "note: the Helm chart `charts/widget-operator` does not render with its default values ("
        ) && run.stdout.lines().next().unwrap().contains("missing"),
        "{}",
        run.stdout
    );
    let (_, rest) = run.stdout.split_once('\n').unwrap();
    assert_eq!(
        findings(rest),
        expected("{{ include \"widget-operator.fullname\" . }}"),
        "{}",
        run.stdout
    );

    // A chart that requires values its defaults leave out renders with a
    // placeholder for each, and is checked as rendered.
    let dir = broken("charts/widget-operator/templates/deployment.yaml", &|t| {
        t.replace(
            "args: [run]",
            "args: [run, {{ required \"set auth.issuer\" .Values.auth.issuer | quote }}, {{ .Values.auth.audience | required \"set auth.audience\" }}]",
        )
    });
    let run = rsop_with_env(dir.path(), &["rbac"], &env);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with(
            "note: the Helm chart `charts/widget-operator` requires values its defaults leave out (auth.audience, auth.issuer): rendered with a placeholder for each\n\
             note: read the Helm chart `charts/widget-operator` as"
        ),
        "{}",
        run.stdout
    );
    let rest = run.stdout.splitn(3, '\n').nth(2).unwrap();
    assert_eq!(
        findings(rest),
        expected("rsop-rbac-widget-operator"),
        "{}",
        run.stdout
    );
}

/// rsop's own scaffold passes its own check with nothing to say: every request the manager
/// (rsop-runtime's) and an `--image` controller make is granted by the roles `config/` ships (the
/// markers' role, the leader-election and metrics-auth roles), and they grant nothing more; on a
/// new project, and with a kind.
#[test]
fn a_scaffolded_project_grants_every_request_it_makes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    crate::support::rsop(
        dir,
        &["init", "--domain", "example.com", "--project-name", "demo"],
    )
    .success();
    let clean = |requests: usize| {
        let run = rsop_with_env(dir, &["rbac"], &[("PATH", path_with_helm(None))]);
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        assert_eq!(
            findings(&run.stdout),
            Vec::<String>::new(),
            "{}",
            run.stdout
        );
        let summary = format!(
            "rbac: `manager` as Deployment `controller-manager` ({requests} requests checked, 0 not checked); 0 errors, 0 warnings\n"
        );
        assert!(run.stdout.ends_with(&summary), "{}", run.stdout);
    };
    // The manager's Lease (get, list, watch, create, update) and its metrics reviews.
    clean(7);
    crate::support::rsop(
        dir,
        &[
            "create",
            "api",
            "--group",
            "apps",
            "--version",
            "v1",
            "--kind",
            "HelloApp",
            "--image",
            "nginx:1.27",
        ],
    )
    .success();
    clean(21);
}

/// One binary, two workloads (`tests/fixtures/rbac-modes`): the Deployment
/// runs it with `--mode=controller`, the `DaemonSet` with `--mode=agent`, and
/// `main` reads the flag from `std::env::args()`. Each workload is held to
/// its own mode's requests: the agent's role lacks the eviction it sends,
/// and no request of one mode is asked of the other's role.
#[test]
fn modes_chosen_by_a_flag_value_are_checked_apart() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-modes");
    let run = rsop_with_env(&fixture, &["rbac"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run.stdout),
        [
            "error src/agent.rs:14:18: `pods.evict` sends `create` on `pods/eviction` across the cluster | add the rule `{apiGroups: [\"\"], resources: [\"pods/eviction\"], verbs: [\"create\"]}` to the ClusterRole `fleet-agent` at deploy/rbac.yaml:23:1"
        ],
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.lines().last().unwrap(),
        "rbac: `fleet --mode=controller` as Deployment `fleet-controller` (2 requests checked, 0 not checked); \
         `fleet --mode=agent` as DaemonSet `fleet-agent` (3 requests checked, 0 not checked); 1 error, 0 warnings"
    );
}

/// A workload tied by the image the repository builds
/// (`tests/fixtures/rbac-image`): its image is named for no binary, the
/// Makefile tags it and the Dockerfile's last stage runs `keeper` under
/// another name, beside a second binary that also makes requests. Its role
/// names every resource in the singular, so it grants nothing: each rule
/// is an error with the plural it meant, and each request one too, never
/// "nothing was checked". The metrics proxy beside it is another project's
/// image, and so is an operator installed beside it, whose role naming
/// resources of its own releases is not judged. A Dockerfile that runs
/// nothing is named; a bundle image of files is not.
#[test]
fn a_workload_is_tied_by_the_image_it_runs_whatever_its_roles_grant() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-image");
    let run = rsop_with_env(&fixture, &["rbac"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.starts_with(
            "note: docker/debug/Dockerfile names no ENTRYPOINT or CMD in its last stage: the program its image runs is not known\n"
        ),
        "{}",
        run.stdout
    );
    let (_, rest) = run.stdout.split_once('\n').unwrap();
    assert_eq!(
        findings(rest),
        [
            "error deploy/keeper.yaml:13:1: this rule of the Role `keeper` names `configmap`: the core group (\"\") serves no `configmap`, so it grants nothing | did you mean `configmaps`?",
            "error deploy/keeper.yaml:16:1: this rule of the Role `keeper` names `secret`: the core group (\"\") serves no `secret`, so it grants nothing | did you mean `secrets`?",
            "error src/main.rs:11:21: `maps.list` sends `list` on `configmaps` | write `configmaps` for `configmap` in the rule at deploy/keeper.yaml:13:1",
            "error src/main.rs:13:20: `secrets.get_opt` sends `get` on `secrets` | write `secrets` for `secret` in the rule at deploy/keeper.yaml:16:1",
            "error src/main.rs:18:21: `secrets.create` sends `create` on `secrets` | write `secrets` for `secret` in the rule at deploy/keeper.yaml:16:1",
            "note : not ours: container `metrics-proxy` (quay.io/brancz/kube-rbac-proxy:v0.18.0) of Deployment `keeper`, \
             container `workflow-controller` (quay.io/argoproj/workflow-controller:v3.5.0) of Deployment `workflow-controller`: \
             images of other projects, not checked; rules they may need are not reported unused | ",
        ],
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.lines().last().unwrap(),
        "rbac: `keeper` as Deployment `keeper` (3 requests checked, 0 not checked); 5 errors, 0 warnings"
    );
}

/// An image pushed under a path of the repository's own
/// (`ghcr.io/acme/keeper/operator`) names its program in any segment of the
/// path, with no build file to tag it; another project's image whose name
/// ends in the program's (`quay.io/argoproj/workflow-controller` beside a
/// binary `controller`) runs nothing of the project's.
#[test]
fn an_image_path_names_its_program_and_a_longer_name_is_not_ours() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-image");
    let repo = tempfile::tempdir().unwrap();
    copy_tree(&fixture, repo.path(), None);
    std::fs::remove_file(repo.path().join("Makefile")).unwrap();
    replace_in(
        &repo.path().join("deploy/keeper.yaml"),
        "ghcr.io/acme/harbor-keeper:v0.3.0",
        "ghcr.io/acme/keeper/operator:v0.3.0",
    );
    std::fs::rename(
        repo.path().join("src/bin/keeperctl.rs"),
        repo.path().join("src/bin/controller.rs"),
    )
    .unwrap();
    let run = rsop_with_env(repo.path(), &["rbac"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("container `workflow-controller` (quay.io/argoproj/workflow-controller:v3.5.0) of Deployment `workflow-controller`"),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.lines().last().unwrap(),
        "rbac: `keeper` as Deployment `keeper` (3 requests checked, 0 not checked); 5 errors, 0 warnings"
    );
}

/// The operator of `tests/fixtures/rbac-modes` as some repositories lay it
/// out: the crate in a folder of its own, its manifests beside it at the
/// root, and the image a kustomize placeholder (`controller:latest`) that
/// the kustomization renames. Run at the root, `rsop rbac` finds the crate
/// and ties the workloads through the rename.
#[test]
fn a_crate_in_a_folder_and_a_kustomize_image_rename_are_followed() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-modes");
    let repo = tempfile::tempdir().unwrap();
    copy_tree(&fixture.join("src"), &repo.path().join("fleet/src"), None);
    std::fs::copy(
        fixture.join("Cargo.toml"),
        repo.path().join("fleet/Cargo.toml"),
    )
    .unwrap();
    copy_tree(&fixture.join("deploy"), &repo.path().join("deploy"), None);
    replace_in(
        &repo.path().join("deploy/fleet.yaml"),
        "example.com/fleet:v1",
        "controller:latest",
    );
    std::fs::write(
        repo.path().join("deploy/kustomization.yaml"),
        "resources: [fleet.yaml, rbac.yaml]\nimages:\n  - name: controller\n    newName: example.com/fleet\n    newTag: v1\n",
    )
    .unwrap();
    let run = rsop_with_env(repo.path(), &["rbac"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run.stdout),
        [
            "error fleet/src/agent.rs:14:18: `pods.evict` sends `create` on `pods/eviction` across the cluster | add the rule `{apiGroups: [\"\"], resources: [\"pods/eviction\"], verbs: [\"create\"]}` to the ClusterRole `fleet-agent` at deploy/rbac.yaml:23:1"
        ],
        "{}",
        run.stdout
    );
}

/// The note on the program of `tests/fixtures/rbac-unused` that the warden
/// runs in Jobs, which no shipped workload runs.
const TASK: &str = "note src/bin/warden-task.rs:1:1: `warden-task` makes 1 request that is not checked: no workload rsop read runs it, and a program of the project creates Jobs or Pods | ship the workload that runs it (with its ServiceAccount), or check its requests against the account it runs under by hand";

/// Rules no call of the code names but the programs need all the same
/// (`tests/fixtures/rbac-unused`): `update` on the finalizers of an owner
/// the code writes an owner reference to by hand, `get` on the Secrets a
/// second binary reads when the warden runs it in Jobs under its own
/// account, and, for a program that writes role bindings, what the API
/// server asks it to hold to grant (`bind`, and the role's own rules). The
/// one rule nothing needs is still found.
#[test]
fn rules_the_programs_need_without_naming_them_are_not_unused() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-unused");
    let run = rsop_with_env(&fixture, &["rbac"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let unused_delete = "warning deploy/warden.yaml:13:1: this rule of the Role `warden` grants `delete` on `configmaps` that no request of the programs bound to it needs | remove what no call needs (least privilege)";
    // The task the warden runs in Jobs is named, as its requests are
    // checked against no role.
    assert_eq!(
        findings(&run.stdout),
        [unused_delete, TASK],
        "{}",
        run.stdout
    );

    // A role that may `escalate` holds its other rules for nothing.
    let repo = tempfile::tempdir().unwrap();
    copy_tree(&fixture, repo.path(), None);
    replace_in(
        &repo.path().join("deploy/warden.yaml"),
        "    verbs: [\"bind\"]",
        "    verbs: [\"bind\", \"escalate\"]",
    );
    let run = rsop_with_env(repo.path(), &["rbac"], &[]);
    assert_eq!(
        findings(&run.stdout),
        [
            unused_delete,
            "warning deploy/warden.yaml:43:1: this rule of the Role `warden-grants` grants `get` on `secrets` that no request of the programs bound to it needs | remove what no call needs (least privilege)",
            TASK,
        ],
        "{}",
        run.stdout
    );
}

/// A program that hands its roles or bindings to another crate's function
/// (`create_or_update(&bindings, ..)`) may write them: its role's rules,
/// which the API server asks it to hold to grant, are not unused.
#[test]
fn a_binding_written_by_another_crate_still_shields_the_grants() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-unused");
    let repo = tempfile::tempdir().unwrap();
    copy_tree(&fixture, repo.path(), None);
    replace_in(
        &repo.path().join("src/bin/warden-grants.rs"),
        "    bindings\n        .create(&PostParams::default(), &RoleBinding::default())\n        .await?;\n",
        "    installer::create_or_update(&bindings, RoleBinding::default()).await?;\n    let _ = PostParams::default();\n    let maps: Api<k8s_openapi::api::core::v1::Secret> = Api::default_namespaced(Client::try_default().await?);\n    maps.get(\"team\").await?;\n",
    );
    let run = rsop_with_env(repo.path(), &["rbac"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let findings = findings(&run.stdout);
    assert!(
        findings
            .iter()
            .any(|f| f.starts_with("note src/bin/warden-grants.rs:")
                && f.contains("`installer::create_or_update`")),
        "{}",
        run.stdout
    );
    assert!(
        !findings
            .iter()
            .any(|f| f.contains("Role `warden-grants` grants")),
        "{}",
        run.stdout
    );
}

/// A program that gives its `Client` to another crate's function (a
/// reporter, a framework's runtime) may send any request through it: the
/// rules nothing rsop reads needs are noted, not reported unused, beside
/// the note at the call.
#[test]
fn a_client_given_to_another_crate_leaves_no_rule_unused() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-unused");
    let repo = tempfile::tempdir().unwrap();
    copy_tree(&fixture, repo.path(), None);
    replace_in(
        &repo.path().join("src/main.rs"),
        "    let client = Client::try_default().await?;\n",
        "    let client = Client::try_default().await?;\n    reporter::publish(client.clone()).await?;\n",
    );
    let run = rsop_with_env(repo.path(), &["rbac"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run.stdout),
        [
            "note deploy/warden.yaml:13:1: this rule of the Role `warden` grants `delete` on `configmaps` that no request rsop reads needs; not reported unused, as `reporter::publish` (src/main.rs:11:15) is given a `Client` and may send any request | check what that function requests (its documentation names them) before removing the rule",
            TASK,
            "note src/main.rs:11:15: `reporter::publish` of `warden` is not checked: it is a function of another crate given a `Client`, and rsop has not read that crate | let cargo download the crate (`cargo fetch`) so rsop reads its requests, or grant what the function needs by hand",
        ],
        "{}",
        run.stdout
    );
}

/// A crate that locks a kube release older than the API rsop reads, and
/// writes that release's untyped API, is told so, beside what it could
/// check.
#[test]
fn an_older_kube_than_rsop_reads_is_named() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-modes");
    let repo = tempfile::tempdir().unwrap();
    copy_tree(&fixture, repo.path(), None);
    std::fs::write(
        repo.path().join("Cargo.lock"),
        "version = 3\n\n[[package]]\nname = \"kube\"\nversion = \"0.16.1\"\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("src/legacy.rs"),
        "pub async fn scale(client: APIClient) {\n    let deployments = Api::v1Deployment(client).within(\"ops\");\n    deployments.get(\"web\").await;\n}\n",
    )
    .unwrap();
    let run = rsop_with_env(repo.path(), &["rbac"], &[]);
    assert!(
        run.stdout.starts_with(
            "note: Cargo.lock locks kube 0.16.1: rsop reads the kube-rs API from release 0.70 on"
        ),
        "{}",
        run.stdout
    );
}

/// Without helm, a chart that names its account with one helper in the
/// Deployment and another in the binding cannot be matched: the workload is
/// noted, not charged with errors its roles would grant.
#[test]
fn a_chart_whose_helpers_rsop_cannot_expand_leaves_its_workload_noted() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-modes");
    let repo = tempfile::tempdir().unwrap();
    copy_tree(&fixture.join("src"), &repo.path().join("src"), None);
    std::fs::copy(fixture.join("Cargo.toml"), repo.path().join("Cargo.toml")).unwrap();
    let templates = repo.path().join("charts/fleet/templates");
    std::fs::create_dir_all(&templates).unwrap();
    std::fs::write(
        repo.path().join("charts/fleet/Chart.yaml"),
        "apiVersion: v2\nname: fleet\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        repo.path().join("charts/fleet/values.yaml"),
        "image: example.com/fleet\n",
    )
    .unwrap();
    std::fs::write(
        templates.join("deployment.yaml"),
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"fleet.fullname\" . }}\nspec:\n  template:\n    spec:\n      serviceAccountName: {{ include \"fleet.account\" . }}\n      containers:\n        - name: fleet\n          image: {{ .Values.image }}\n          args: [\"--mode=controller\"]\n",
    )
    .unwrap();
    std::fs::write(
        templates.join("rbac.yaml"),
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {{ include \"fleet.fullname\" . }}\nrules:\n  - apiGroups: [\"\"]\n    resources: [\"nodes\"]\n    verbs: [\"list\", \"patch\"]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: {{ include \"fleet.fullname\" . }}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: {{ include \"fleet.fullname\" . }}\nsubjects:\n  - kind: ServiceAccount\n    name: {{ include \"fleet.serviceAccountName\" . }}\n",
    )
    .unwrap();
    let run = rsop_with_env(repo.path(), &["rbac"], &[("PATH", path_with_helm(None))]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(
            "note: not checked: the chart names its ServiceAccount, roles or bindings with template helpers rsop cannot expand without helm"
        ),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("error:"), "{}", run.stdout);
}

/// A registry or git dependency that depends on kube sends requests of
/// its own when the operator calls it. Once cargo has downloaded its
/// sources (the release and commit Cargo.lock holds, a git crate in its
/// repository's workspace), its requests are checked at their lines, with
/// the kind the operator gives a generic one; before, each call that gives
/// it a `Client` or an `Api` is noted with what to do, and so is each
/// awaited function of it (which may make a client of its own) and method
/// of a value of its types (`Cleaner::new(..).context(..)?`).
#[test]
fn a_dependency_cargo_has_downloaded_is_read_for_its_requests() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-fetched");
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture, dir.path(), None);
    let project = dir.path().join("project");
    let home = [("CARGO_HOME", dir.path().join("cargo-home").into_os_string())];
    let run = rsop_with_env(&project, &["rbac"], &home);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run.stdout),
        [
            "error ../cargo-home/git/checkouts/leases-5e0c4a7d2b19f3a6/3f9c2e1/crates/leases/src/lib.rs:24:14: `self.leases.replace` sends `update` on `leases` of `coordination.k8s.io` | add `update` to the verbs of the rule at deploy/keeper.yaml:12:1",
            "error ../cargo-home/registry/src/index.crates.io-1949cf8c6b5b557f/kube-tidy-0.3.1/src/lib.rs:21:14: `nodes.list` sends `list` on `nodes` across the cluster | bind a ClusterRole with the rule `{apiGroups: [\"\"], resources: [\"nodes\"], verbs: [\"list\"]}` to ServiceAccount `keeper` with a ClusterRoleBinding",
            "error ../cargo-home/registry/src/index.crates.io-1949cf8c6b5b557f/kube-tidy-0.3.1/src/lib.rs:36:18: `services.delete` sends `delete` on `services` | add the rule `{apiGroups: [\"\"], resources: [\"services\"], verbs: [\"delete\"]}` to the Role `keeper` at deploy/keeper.yaml:6:1",
            "error ../cargo-home/registry/src/index.crates.io-1949cf8c6b5b557f/kube-tidy-0.3.1/src/sweep.rs:8:10: `maps.delete_collection` sends `deletecollection` on `configmaps` | add the rule `{apiGroups: [\"\"], resources: [\"configmaps\"], verbs: [\"deletecollection\"]}` to the Role `keeper` at deploy/keeper.yaml:6:1",
        ],
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("`keeper` as Deployment `keeper` (6 requests checked, 0 not checked)"),
        "{}",
        run.stdout
    );

    let empty = tempfile::tempdir().unwrap();
    let home = [("CARGO_HOME", empty.path().as_os_str().to_owned())];
    let run = rsop_with_env(&project, &["rbac"], &home);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let fetch = "let cargo download the crate (`cargo fetch`) so rsop reads its requests, or grant what the function needs by hand";
    assert_eq!(
        findings(&run.stdout),
        [
            format!(
                "note src/main.rs:9:28: `Elector::new` of `keeper` is not checked: it is a function of another crate given a `Client`, and rsop has not read that crate | {fetch}"
            ),
            format!(
                "note src/main.rs:12:16: `kube_tidy::prune` of `keeper` is not checked: it is a function of another crate given an `Api`, and rsop has not read that crate | {fetch}"
            ),
            format!(
                "note src/main.rs:14:13: `cleaner.run` of `keeper` is not checked: it is a function of a dependency that depends on kube and that cargo has not downloaded for rsop to read | {fetch}"
            ),
            format!(
                "note src/main.rs:15:23: `kube_tidy::sweep::configmaps` of `keeper` is not checked: it is a function of another crate given a `Client`, and rsop has not read that crate | {fetch}"
            ),
            // A function that makes a client of its own, at each call.
            format!(
                "note src/main.rs:16:29: `kube_tidy::nodes` of `keeper` is not checked: it is a function of a dependency that depends on kube and that cargo has not downloaded for rsop to read | {fetch}"
            ),
            format!(
                "note src/main.rs:18:32: `kube_tidy::nodes` of `keeper` is not checked: it is a function of a dependency that depends on kube and that cargo has not downloaded for rsop to read | {fetch}"
            ),
        ],
        "{}",
        run.stdout
    );
}

/// Replaces `from`, which the file at `path` must hold, by `to`.
fn replace_in(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} holds no {from:?}", path.display());
    std::fs::write(path, text.replace(from, to)).unwrap();
}

/// Writes `text` at `path` under `dir`, with the folders it needs.
fn write_file(dir: &Path, path: &str, text: &str) {
    let path = dir.join(path);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The Cargo.toml of an operator `name` on kube 2, with `more` after its
/// dependencies.
fn operator_manifest(name: &str, more: &str) -> String {
    format!(
        "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nk8s-openapi = {{ version = \"0.26\", features = [\"v1_34\"] }}\nkube = \"2\"\ntokio = {{ version = \"1\", features = [\"full\"] }}\n{more}"
    )
}

/// A Role granting `verb` on `resource` of `group`, bound to the account
/// `name` that a Deployment `name` of `image` runs under; `container` adds
/// to its container.
fn role_and_deployment(
    name: &str,
    group: &str,
    resource: &str,
    verb: &str,
    image: &str,
    container: &str,
) -> String {
    format!(
        "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: {name}}}\nrules:\n  - apiGroups: [\"{group}\"]\n    resources: [\"{resource}\"]\n    verbs: [\"{verb}\"]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: {name}}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: {name}}}\nsubjects: [{{kind: ServiceAccount, name: {name}}}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n      serviceAccountName: {name}\n      containers:\n        - name: {name}\n          image: {image}\n{container}"
    )
}

/// A program that lists the core kind `kind` in its namespace.
fn listing_program(kind: &str) -> String {
    format!(
        "use k8s_openapi::api::core::v1::{kind};\nuse kube::{{Api, Client}};\n\n#[tokio::main]\nasync fn main() {{\n    let client = Client::try_default().await.unwrap();\n    let api: Api<{kind}> = Api::default_namespaced(client);\n    api.list(&Default::default()).await.unwrap();\n}}\n"
    )
}

/// A manifest whose image is a variable filled at deploy time (`${IMAGE}`
/// for envsubst) deploys what the Dockerfile beside it builds: each of two
/// programs is checked against its own role.
#[test]
fn a_placeholder_image_runs_what_the_dockerfile_beside_it_builds() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| write_file(dir.path(), path, text);
    write("Cargo.toml", &operator_manifest("tide", ""));
    write("src/bin/api.rs", &listing_program("ConfigMap"));
    write("src/bin/run.rs", &listing_program("Secret"));
    for (folder, binary, resource) in [
        ("api", "api", "configmaps"),
        ("controller", "run", "secrets"),
    ] {
        write(
            &format!("k8s/{folder}/Dockerfile"),
            &format!(
                "FROM rust:1 AS build\nCOPY . .\nRUN cargo build --release --bin {binary}\n\nFROM debian:stable-slim\nCOPY --from=build /target/release/{binary} /app/{binary}\nENTRYPOINT [\"/app/{binary}\"]\n"
            ),
        );
        write(
            &format!("k8s/{folder}/deployment.yaml"),
            &format!(
                "apiVersion: v1\nkind: ServiceAccount\nmetadata: {{name: {folder}, namespace: tide}}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: {folder}, namespace: tide}}\nrules:\n  - apiGroups: [\"\"]\n    resources: [\"{resource}\"]\n    verbs: [\"list\"]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: {folder}, namespace: tide}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: {folder}}}\nsubjects: [{{kind: ServiceAccount, name: {folder}, namespace: tide}}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: tide-{folder}, namespace: tide}}\nspec:\n  template:\n    spec:\n      serviceAccountName: {folder}\n      containers:\n        - name: {folder}\n          image: \"${{IMAGE}}\"\n"
            ),
        );
    }
    let run = rsop_with_env(dir.path(), &["rbac"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run.stdout),
        Vec::<String>::new(),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "rbac: `api` as Deployment `tide-api` (1 request checked, 0 not checked); `run` as Deployment `tide-controller` (1 request checked, 0 not checked); 0 errors, 0 warnings"
        ),
        "{}",
        run.stdout
    );
}

/// Images pushed under the owner of the project's repository are the
/// project's, and one named for a stage of its Dockerfile
/// (`acme/kt-server`, built with `--target server`) runs what that stage
/// runs, not what the last stage runs.
#[test]
fn an_image_runs_what_the_dockerfile_stage_it_is_named_for_runs() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| write_file(dir.path(), path, text);
    write("Cargo.toml", "[workspace]\nmembers = [\"crates/*\"]\n");
    for (binary, kind) in [("server", "ConfigMap"), ("operator", "Secret")] {
        write(
            &format!("crates/{binary}/Cargo.toml"),
            &format!(
                "[package]\nname = \"{binary}\"\nversion = \"0.1.0\"\nedition = \"2021\"\nrepository = \"https://github.com/acme/kubetide\"\n\n[dependencies]\nk8s-openapi = {{ version = \"0.26\", features = [\"v1_34\"] }}\nkube = \"2\"\ntokio = {{ version = \"1\", features = [\"full\"] }}\n"
            ),
        );
        write(
            &format!("crates/{binary}/src/main.rs"),
            &listing_program(kind),
        );
    }
    write(
        "docker/Dockerfile",
        "FROM rust:1 AS builder\nCOPY . .\nRUN cargo build --release\n\nFROM debian:stable-slim AS base\n\nFROM base AS server\nCOPY --from=builder /target/release/server server\nENTRYPOINT [\"./server\"]\n\nFROM base AS operator\nCOPY --from=builder /target/release/operator operator\nENTRYPOINT [\"./operator\"]\n",
    );
    for (binary, resource) in [("server", "configmaps"), ("operator", "secrets")] {
        write(
            &format!("deploy/{binary}.yaml"),
            &format!(
                "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {{name: {binary}, namespace: tide}}\nrules:\n  - apiGroups: [\"\"]\n    resources: [\"{resource}\"]\n    verbs: [\"list\"]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata: {{name: {binary}, namespace: tide}}\nroleRef: {{apiGroup: rbac.authorization.k8s.io, kind: Role, name: {binary}}}\nsubjects: [{{kind: ServiceAccount, name: {binary}, namespace: tide}}]\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {binary}, namespace: tide}}\nspec:\n  template:\n    spec:\n      serviceAccountName: {binary}\n      containers:\n        - name: {binary}\n          image: acme/kt-{binary}:latest\n"
            ),
        );
    }
    // Another project of the same owner, deployed beside it.
    write(
        "deploy/backup.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: backup, namespace: tide}\nspec:\n  template:\n    spec:\n      serviceAccountName: operator\n      containers:\n        - name: backup\n          image: acme/vault-backup:latest\n",
    );
    let run = rsop_with_env(dir.path(), &["rbac"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run.stdout),
        [
            "note : not ours: container `backup` (acme/vault-backup:latest) of Deployment `backup`: images of other projects, not checked; rules they may need are not reported unused | "
        ],
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(
            "rbac: `operator` as Deployment `operator` (1 request checked, 0 not checked); `server` as Deployment `server` (1 request checked, 0 not checked); 0 errors, 0 warnings"
        ),
        "{}",
        run.stdout
    );
}

/// What the operator makes is not what it is deployed as: a handlebars
/// template its code names (`"worker"` in `"templates/{}.yaml"` for
/// `templates/worker.yaml`) is rendered into an object at run time, and an
/// image built by the Dockerfile beside its manifest, which runs another
/// program (`python -m server`), is not the crate's even when a folder of
/// its path is the crate's name.
#[test]
fn templates_the_code_renders_and_images_of_other_dockerfiles_run_nothing_of_the_crate() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| write_file(dir.path(), path, text);
    write("Cargo.toml", &operator_manifest("keeper", ""));
    write(
        "src/main.rs",
        &(listing_program("ConfigMap").replace(
            "#[tokio::main]",
            "/// The template of the worker each object gets, in `templates/`.\nconst WORKER: &str = \"worker\";\nconst TEMPLATES: &str = \"templates/{}.yaml\";\n\n#[tokio::main]",
        ) + "\npub fn template() -> String {\n    TEMPLATES.replace(\"{}\", WORKER)\n}\n"),
    );
    let deployment = |name: &str, account: &str, image: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n      serviceAccountName: {account}\n      containers:\n        - name: {name}\n          image: {image}\n"
        )
    };
    write(
        "deploy/keeper.yaml",
        &role_and_deployment(
            "keeper",
            "",
            "configmaps",
            "list",
            "ghcr.io/acme/keeper:v1",
            "",
        ),
    );
    write(
        "templates/worker.yaml",
        "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: {{ name }}-worker\nspec:\n  template:\n    spec:\n      containers:\n        - name: worker\n          image: {{ image }}\n",
    );
    write(
        "dev/server/Dockerfile",
        "FROM python:3.12-slim\nCOPY server.py .\nENTRYPOINT [\"python\", \"-m\", \"server\"]\n",
    );
    write(
        "dev/server/deployment.yaml",
        &deployment("server", "default", "registry.local:5000/keeper/server:dev"),
    );
    let run = rsop_with_env(dir.path(), &["rbac"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run.stdout),
        Vec::<String>::new(),
        "{}",
        run.stdout
    );
    assert_eq!(
        run.stdout.lines().last().unwrap(),
        "rbac: `keeper` as Deployment `keeper` (1 request checked, 0 not checked); 0 errors, 0 warnings"
    );

    // A template the code does not name is still read (as far as it can
    // be without its engine).
    replace_in(&dir.path().join("src/main.rs"), "\"worker\"", "\"runner\"");
    let run = rsop_with_env(dir.path(), &["rbac"], &[]);
    assert!(
        run.stdout.contains("templates/worker.yaml"),
        "{}",
        run.stdout
    );
}

/// Types a build script generates into `OUT_DIR` (kopium's, from CRD
/// files) take their kind from the repository's CRD that declares it, in
/// Rust's casing (`TlsStore` for `TLSStore`), through a generic helper
/// too; a type no source and no CRD declares is noted where it is given.
#[test]
fn a_kind_generated_at_build_time_is_read_from_the_crd_file_it_is_generated_from() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| write_file(dir.path(), path, text);
    write(
        "Cargo.toml",
        &operator_manifest("edge", "\n[build-dependencies]\nkopium = \"0.23\"\n"),
    );
    write(
        "src/main.rs",
        r#"mod generated {
    pub mod tls_store {
        include!(concat!(env!("OUT_DIR"), "/tls_store.rs"));
    }
    pub mod tunnel {
        include!(concat!(env!("OUT_DIR"), "/tunnel.rs"));
    }
}

use generated::tls_store::TlsStore;
use generated::tunnel::Tunnel;
use kube::api::{Api, ListParams};
use kube::Client;

/// Lists the objects of any kind.
async fn count<K>(api: &Api<K>) -> usize
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    api.list(&ListParams::default()).await.map_or(0, |l| l.items.len())
}

#[tokio::main]
async fn main() {
    let client = Client::try_default().await.unwrap();
    let stores: Api<TlsStore> = Api::default_namespaced(client.clone());
    let store = stores.get("default").await.unwrap();
    count(&stores).await;
    // Another project's kind: the apply may create it.
    let apply = kube::api::PatchParams::apply("edge");
    stores.patch("default", &apply, &kube::api::Patch::Apply(&store)).await.unwrap();
    let tunnels: Api<Tunnel> = Api::default_namespaced(client);
    count(&tunnels).await;
}
"#,
    );
    write(
        "crds/tlsstore.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: tlsstores.traefik.io}\nspec:\n  group: traefik.io\n  names: {kind: TLSStore, plural: tlsstores, singular: tlsstore}\n  scope: Namespaced\n  versions: [{name: v1alpha1, served: true, storage: true}]\n",
    );
    write(
        "deploy/edge.yaml",
        &role_and_deployment(
            "edge",
            "traefik.io",
            "tlsstores",
            "get",
            "ghcr.io/acme/edge:v1",
            "",
        ),
    );
    let run = rsop_with_env(dir.path(), &["rbac"], &[]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        findings(&run.stdout),
        [
            "error src/main.rs:20:9: `api.list (from `count` at src/main.rs:28)` sends `list` on `tlsstores` of `traefik.io` | add `list` to the verbs of the rule at deploy/edge.yaml:5:1",
            "error src/main.rs:31:12: `stores.patch` sends `create` on `tlsstores` of `traefik.io` | add `create` to the verbs of the rule at deploy/edge.yaml:5:1",
            "error src/main.rs:31:12: `stores.patch` sends `patch` on `tlsstores` of `traefik.io` | add `patch` to the verbs of the rule at deploy/edge.yaml:5:1",
            "note src/main.rs:33:5: `count` of `edge` is not checked: neither the sources nor a CRD file of the repository declare the kind of the type it names | add the kind's CRD to the repository (the one a build script generates the type from), or declare the kind with `#[kube(..)]`",
        ],
        "{}",
        run.stdout
    );
}

/// A variable of the environment the code tests without it changing any
/// request (a log level) does not name the program that runs.
#[test]
fn an_environment_variable_that_changes_no_request_names_no_mode() {
    let dir = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| write_file(dir.path(), path, text);
    write(
        "Cargo.toml",
        &operator_manifest("keeper", "tracing = \"0.1\"\n"),
    );
    write(
        "src/main.rs",
        &listing_program("ConfigMap").replace(
            "async fn main() {\n",
            "async fn main() {\n    let level = std::env::var(\"LOG_LEVEL\").unwrap_or_else(|_| \"info\".to_string());\n    let level = match level.as_str() {\n        \"debug\" => tracing::Level::DEBUG,\n        _ => tracing::Level::INFO,\n    };\n    println!(\"{level}\");\n",
        ),
    );
    write(
        "deploy/keeper.yaml",
        &role_and_deployment(
            "keeper",
            "",
            "configmaps",
            "list",
            "ghcr.io/acme/keeper:v1",
            "          env: [{name: LOG_LEVEL, value: debug}]\n",
        ),
    );
    let run = rsop_with_env(dir.path(), &["rbac"], &[]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(
        run.stdout.lines().last().unwrap(),
        "rbac: `keeper` as Deployment `keeper` (1 request checked, 0 not checked); 0 errors, 0 warnings",
        "{}",
        run.stdout
    );
}

/// A program that writes role bindings holds every permission of the roles
/// they name, or `bind` on them: a role that grants no `bind` is named at
/// the write, as what the API server checks there is not seen.
#[test]
fn a_binding_written_without_bind_is_noted_at_the_write() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rbac-unused");
    let repo = tempfile::tempdir().unwrap();
    copy_tree(&fixture, repo.path(), None);
    replace_in(
        &repo.path().join("deploy/warden.yaml"),
        "    resources: [\"roles\"]\n    verbs: [\"bind\"]",
        "    resources: [\"roles\"]\n    verbs: [\"get\"]",
    );
    let run = rsop_with_env(repo.path(), &["rbac"], &[]);
    let noted = findings(&run.stdout)
        .into_iter()
        .filter(|f| f.contains("`bind`"))
        .collect::<Vec<_>>();
    assert_eq!(
        noted,
        [
            "note src/bin/warden-grants.rs:10:10: `bindings.create` of `warden-grants` writes rolebindings, and no role bound to ServiceAccount `warden-grants` grants `bind` on the roles they name: the API server accepts each only if the account holds every permission its role grants | grant `bind` on the roles the bindings name (`resourceNames` narrows it), or hold what they grant"
        ],
        "{}",
        run.stdout
    );
    // Granted, it says nothing.
    let run = rsop_with_env(&fixture, &["rbac"], &[]);
    assert!(
        !run.stdout.contains("grants `bind` on the roles"),
        "{}",
        run.stdout
    );
}
