//! The images a repository builds, and so which containers are its own:
//! what each Dockerfile's last stage runs, and the names the project goes
//! by (its folder, packages, repository, charts, Dockerfiles) and tags its
//! images with in its build files.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A Dockerfile's last stage: what its image runs.
#[derive(Debug, Clone, Default)]
pub struct Dockerfile {
    /// Relative to the project root.
    pub path: PathBuf,
    /// The words of its `ENTRYPOINT` and then its `CMD`, as file names.
    pub runs: Vec<String>,
    /// What it copies: (the source's file name, the destination).
    pub copies: Vec<(String, String)>,
    /// The name it is built for: its folder (`docker/agent/Dockerfile`),
    /// or its suffix (`Dockerfile.agent`, `agent.Dockerfile`).
    pub name: Option<String>,
    /// Its named stages that run a program, each an image of its own
    /// when built with `--target` (`FROM base AS operator` then
    /// `ENTRYPOINT ["./operator"]`): the stage's name and what it runs.
    pub targets: Vec<(String, Dockerfile)>,
}

impl Dockerfile {
    /// Whether `name` is the file name of a Dockerfile.
    pub fn named(name: &str) -> bool {
        let lower = name.to_ascii_lowercase();
        matches!(lower.as_str(), "dockerfile" | "containerfile")
            || ["dockerfile.", "containerfile."]
                .iter()
                .any(|p| lower.starts_with(p))
            || [".dockerfile", ".containerfile"]
                .iter()
                .any(|s| lower.ends_with(s))
    }

    /// Reads the Dockerfile at `path` (shown as `shown`); `None` for an
    /// image of files that runs nothing (`FROM scratch` with no command: an
    /// OLM bundle, a chart), a complaint when its last stage names no
    /// program to run.
    pub fn read(text: &str, shown: &Path) -> Result<Option<Dockerfile>, String> {
        let mut stages: Vec<(Option<String>, Dockerfile)> = Vec::new();
        // Whether the last stage starts from nothing.
        let mut scratch = false;
        // `ARG`s before the first `FROM`, and the stage's `ARG`s and `ENV`s.
        let mut globals: HashMap<String, String> = HashMap::new();
        let mut vars: HashMap<String, String> = HashMap::new();
        for line in instructions(text) {
            let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((&line, ""));
            let instruction = word.to_ascii_uppercase();
            let rest = if matches!(
                instruction.as_str(),
                "COPY" | "ADD" | "ENTRYPOINT" | "CMD" | "ARG" | "ENV"
            ) {
                substitute(rest.trim(), &vars, &globals)
            } else {
                rest.trim().to_string()
            };
            let rest = rest.as_str();
            match instruction.as_str() {
                "ARG" => {
                    let (name, default) = match rest.split_once('=') {
                        Some((name, value)) => (name.trim(), Some(value.trim().trim_matches('"'))),
                        None => (rest.trim(), None),
                    };
                    if stages.is_empty() {
                        globals.insert(name.to_string(), default.unwrap_or_default().to_string());
                    } else {
                        let value = default
                            .map(str::to_string)
                            .or_else(|| globals.get(name).cloned())
                            .unwrap_or_default();
                        vars.insert(name.to_string(), value);
                    }
                }
                "ENV" => {
                    let (name, value) = rest
                        .split_once('=')
                        .or_else(|| rest.split_once(char::is_whitespace))
                        .unwrap_or((rest, ""));
                    vars.insert(
                        name.trim().to_string(),
                        value.trim().trim_matches('"').to_string(),
                    );
                }
                "FROM" => {
                    vars.clear();
                    let words: Vec<&str> = rest.split_whitespace().collect();
                    let base = words.iter().find(|w| !w.starts_with("--")).copied();
                    scratch = base.is_some_and(|b| b.eq_ignore_ascii_case("scratch"));
                    let alias = words
                        .iter()
                        .position(|w| w.eq_ignore_ascii_case("as"))
                        .and_then(|i| words.get(i + 1))
                        .map(|a| a.to_ascii_lowercase());
                    // A stage built on an earlier one runs what it ran.
                    let inherited = base
                        .and_then(|b| {
                            stages
                                .iter()
                                .rev()
                                .find(|(a, _)| a.as_deref() == Some(&b.to_ascii_lowercase()))
                        })
                        .map(|(_, stage)| stage.clone())
                        .unwrap_or_default();
                    stages.push((alias, inherited));
                }
                "ENTRYPOINT" | "CMD" => {
                    let Some((_, stage)) = stages.last_mut() else {
                        continue;
                    };
                    let words = command_words(rest);
                    if word.eq_ignore_ascii_case("ENTRYPOINT") {
                        stage.runs = words;
                    } else {
                        stage.runs.extend(words);
                    }
                }
                "COPY" | "ADD" => {
                    let Some((_, stage)) = stages.last_mut() else {
                        continue;
                    };
                    let words: Vec<String> = command_words(rest)
                        .into_iter()
                        .filter(|w| !w.starts_with("--"))
                        .collect();
                    if let [sources @ .., dest] = words.as_slice() {
                        for source in sources {
                            stage.copies.push((file_name(source), dest.clone()));
                        }
                    }
                }
                _ => {}
            }
        }
        let targets: Vec<(String, Dockerfile)> = stages
            .iter()
            .filter(|(_, stage)| !stage.runs.is_empty())
            .filter_map(|(alias, stage)| Some((alias.clone()?, stage.clone())))
            .collect();
        let Some((_, mut last)) = stages.pop() else {
            return Err(format!("{} has no FROM", shown.display()));
        };
        last.targets = targets;
        // Its images are its named stages' (`--target operator`) when its
        // last stage runs nothing.
        if last.runs.is_empty() && !last.targets.is_empty() {
            last.path = shown.to_path_buf();
            return Ok(Some(last));
        }
        if last.runs.is_empty() && scratch {
            return Ok(None);
        }
        if last.runs.is_empty() {
            return Err(format!(
                "{} names no ENTRYPOINT or CMD in its last stage: the program its image runs is not known",
                shown.display()
            ));
        }
        last.path = shown.to_path_buf();
        let file = shown
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        last.name = file
            .strip_prefix("dockerfile.")
            .or_else(|| file.strip_prefix("containerfile."))
            .or_else(|| file.strip_suffix(".dockerfile"))
            .or_else(|| file.strip_suffix(".containerfile"))
            .map(str::to_string)
            .or_else(|| {
                shown
                    .parent()
                    .and_then(Path::file_name)
                    .map(|d| d.to_string_lossy().to_string())
                    .filter(|d| !matches!(d.as_str(), "docker" | "build" | "images" | "."))
            });
        Ok(Some(last))
    }

    /// The binary, of those `is_binary` accepts, its image runs: a word
    /// of its command, or the file it copied under the name the command
    /// runs (`COPY target/release/operator /app/run`), or, where the command
    /// is a script, the one binary it copies.
    pub fn binary(&self, is_binary: impl Fn(&str) -> bool) -> Option<String> {
        for word in &self.runs {
            if is_binary(word) {
                return Some(word.clone());
            }
            let copied = self
                .copies
                .iter()
                .find(|(source, dest)| file_name(dest) == *word && is_binary(source));
            if let Some((source, _)) = copied {
                return Some(source.clone());
            }
        }
        let copied: BTreeSet<&String> = self
            .copies
            .iter()
            .map(|(source, _)| source)
            .filter(|s| is_binary(s))
            .collect();
        match copied.into_iter().collect::<Vec<_>>().as_slice() {
            [only] => Some((*only).clone()),
            _ => None,
        }
    }
}

/// `text` with `${NAME}`, `${NAME:-default}` and `$NAME` replaced by the
/// build arguments' and environment's values (unset ones by nothing).
fn substitute(
    text: &str,
    vars: &HashMap<String, String>,
    globals: &HashMap<String, String>,
) -> String {
    let value = |name: &str| {
        vars.get(name)
            .or_else(|| globals.get(name))
            .cloned()
            .unwrap_or_default()
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(braced) = after.strip_prefix('{')
            && let Some(end) = braced.find('}')
        {
            let inner = &braced[..end];
            let (name, default) = inner.split_once(":-").unwrap_or((inner, ""));
            let found = value(name);
            out.push_str(if found.is_empty() { default } else { &found });
            rest = &braced[end + 1..];
        } else {
            let end = after
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(after.len());
            if end == 0 {
                out.push('$');
            } else {
                out.push_str(&value(&after[..end]));
            }
            rest = &after[end..];
        }
    }
    out.push_str(rest);
    out
}

/// The instructions of a Dockerfile, continuation lines joined, comments
/// and parser directives left out.
fn instructions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if current.is_empty() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        if let Some(head) = trimmed.strip_suffix('\\') {
            current.push_str(head);
            current.push(' ');
        } else {
            current.push_str(trimmed);
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The words of an instruction's exec form (`["/app", "run"]`) or shell
/// form, as file names for the command (`/usr/local/bin/operator` is
/// `operator`).
fn command_words(rest: &str) -> Vec<String> {
    let words: Vec<String> = match serde_json::from_str::<Vec<String>>(rest) {
        Ok(words) => words,
        Err(_) => rest.split_whitespace().map(str::to_string).collect(),
    };
    words
        .into_iter()
        .map(|w| {
            if w.starts_with('-') || w.ends_with('/') {
                w
            } else {
                file_name(&w)
            }
        })
        .collect()
}

fn file_name(path: &str) -> String {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
        .to_string()
}

/// An image reference's repository path, without registry tag or digest:
/// `ghcr.io/acme/widget:v1` is `ghcr.io/acme/widget`.
pub fn repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rsplit_once(':') {
        Some((head, tag)) if !tag.contains('/') => head,
        _ => image,
    }
}

/// Letters and digits only, lower case: `5-spot` and `5spot` are one name.
pub fn letters(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .collect::<String>()
        .to_ascii_lowercase()
}

/// The names an image goes by: the segments of its repository path after
/// the registry host, the last first (`ghcr.io/acme/walle/operator`:
/// `operator`, `walle`, `acme`). A repository may be pushed under a path of
/// its own, with the program's name anywhere in it.
pub fn path_names(image: &str) -> Vec<&str> {
    let mut segments: Vec<&str> = repository(image)
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    if segments.len() > 1 && (segments[0].contains(['.', ':']) || segments[0] == "localhost") {
        segments.remove(0);
    }
    segments.reverse();
    segments
}

/// Whether `image` is a variable filled in at deploy time (`${IMAGE}`,
/// `$IMG`), or empty: it names no image.
pub fn is_placeholder(image: &str) -> bool {
    let image = image.trim();
    image.is_empty() || image.starts_with('$') || image.contains("${")
}

/// Words an image or package name adds to a program's name without naming
/// another program: `widget-operator` runs `widget`.
const GENERIC_WORDS: &[&str] = &[
    "app",
    "agent",
    "bin",
    "cli",
    "controller",
    "daemon",
    "dev",
    "docker",
    "image",
    "k8s",
    "kube",
    "kubernetes",
    "main",
    "manager",
    "operator",
    "rs",
    "rust",
    "server",
    "service",
    "webhook",
];

/// Whether two names are one, or one is the other with words around it
/// that say nothing else: words `known` accepts (the project's own names)
/// or [`GENERIC_WORDS`]. `ame-controller` is the program `controller` of the
/// project `ame`; `workflow-controller` is not, unless `workflow` is one of
/// the project's names.
pub fn same_or_around(a: &str, b: &str, known: impl Fn(&str) -> bool) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    if letters(&a) == letters(&b) {
        return true;
    }
    [(&a, &b), (&b, &a)].iter().any(|(long, short)| {
        let rest = long
            .strip_prefix(short.as_str())
            .and_then(|r| r.strip_prefix(['-', '_']))
            .or_else(|| {
                long.strip_suffix(short.as_str())
                    .and_then(|r| r.strip_suffix(['-', '_']))
            });
        rest.is_some_and(|rest| {
            rest.split(['-', '_'])
                .all(|w| !w.is_empty() && (GENERIC_WORDS.contains(&w) || known(w)))
        })
    })
}

/// The files whose text names the images a repository builds and pushes.
pub fn is_build_file(path: &Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let in_workflows = path
        .components()
        .any(|c| c.as_os_str() == ".github" || c.as_os_str() == ".gitlab");
    matches!(
        name.as_str(),
        "makefile" | "justfile" | "tiltfile" | "earthfile" | "docker-bake.hcl" | ".gitlab-ci.yml"
    ) || extension == "mk"
        || name.starts_with("skaffold")
        || name.starts_with(".goreleaser")
        || (in_workflows && (extension == "yml" || extension == "yaml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_stage_runs_the_binary_it_copies_under_any_name() {
        let text = r#"
# syntax=docker/dockerfile:1
FROM rust:1.80 AS builder
WORKDIR /src
COPY . .
RUN cargo build --release --bin fleet-operator \
    --locked
ENTRYPOINT ["/bin/false"]

FROM gcr.io/distroless/cc AS runtime
COPY --from=builder /src/target/release/fleet-operator /app/manager
USER 65532
ENTRYPOINT ["/app/manager"]
CMD ["--leader-elect"]
"#;
        let image = Dockerfile::read(text, Path::new("Dockerfile"))
            .unwrap()
            .unwrap();
        assert_eq!(image.runs, ["manager", "--leader-elect"]);
        assert_eq!(
            image.binary(|b| b == "fleet-operator"),
            Some("fleet-operator".into())
        );
        assert_eq!(image.name, None);

        // A shell form under an init, in a stage built on another.
        let text = "FROM debian AS base\nCOPY target/release/agent /usr/local/bin/\n\
                    ENTRYPOINT /usr/bin/tini -- agent\nFROM base\nLABEL x=y\n";
        let image = Dockerfile::read(text, Path::new("docker/agent/Dockerfile"))
            .unwrap()
            .unwrap();
        assert_eq!(image.binary(|b| b == "agent"), Some("agent".into()));
        assert_eq!(image.name.as_deref(), Some("agent"));

        // A script that runs the one binary the image has.
        let text =
            "FROM alpine\nCOPY target/release/agent /bin/agent\nCOPY run.sh /\nCMD [\"/run.sh\"]\n";
        let image = Dockerfile::read(text, Path::new("Dockerfile.node"))
            .unwrap()
            .unwrap();
        assert_eq!(
            image.binary(|b| b == "agent" || b == "ctl"),
            Some("agent".into())
        );
        assert_eq!(image.name.as_deref(), Some("node"));
    }

    #[test]
    fn build_arguments_are_put_in() {
        let text = "ARG BIN=project-operator\nARG ARTIFACT=target/${TARGET}/release/${BIN}\n\
                    FROM rust AS build\nRUN cargo build\n\
                    FROM scratch\nARG ARTIFACT\nCOPY --from=build /app/${ARTIFACT} /operator\n\
                    ENTRYPOINT [\"/operator\"]\n";
        let image = Dockerfile::read(text, Path::new("Dockerfile"))
            .unwrap()
            .unwrap();
        assert_eq!(
            image.copies,
            [("project-operator".to_string(), "operator".to_string())]
        );
        assert_eq!(
            image.binary(|b| b == "project-operator"),
            Some("project-operator".into())
        );
    }

    #[test]
    fn named_stages_are_images_of_their_own() {
        let text = "FROM rust AS build\nRUN cargo build --release\n\n\
                    FROM debian AS server\nCOPY --from=build /target/release/server server\nENTRYPOINT [\"./server\"]\n\n\
                    FROM debian AS operator\nCOPY --from=build /target/release/operator operator\nENTRYPOINT [\"./operator\"]\n\n\
                    FROM scratch AS bundle\nCOPY manifests /manifests\n";
        let image = Dockerfile::read(text, Path::new("docker/Dockerfile"))
            .unwrap()
            .unwrap();
        let targets: Vec<(&str, Option<String>)> = image
            .targets
            .iter()
            .map(|(stage, d)| (stage.as_str(), d.binary(|b| b != "build")))
            .collect();
        assert_eq!(
            targets,
            [
                ("server", Some("server".to_string())),
                ("operator", Some("operator".to_string()))
            ]
        );
    }

    #[test]
    fn a_dockerfile_that_runs_nothing_says_so() {
        let complaint =
            Dockerfile::read("FROM alpine\nRUN true\n", Path::new("build/Dockerfile")).unwrap_err();
        assert_eq!(
            complaint,
            "build/Dockerfile names no ENTRYPOINT or CMD in its last stage: the program its image runs is not known"
        );
        assert!(Dockerfile::read("# nothing\n", Path::new("Dockerfile")).is_err());
        // An image of files (an OLM bundle) runs nothing, and says nothing.
        let bundle = "FROM scratch\nLABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1\nCOPY manifests /manifests/\n";
        assert!(
            Dockerfile::read(bundle, Path::new("bundle.Dockerfile"))
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn image_names() {
        assert_eq!(repository("ghcr.io/acme/widget:v1"), "ghcr.io/acme/widget");
        assert_eq!(repository("localhost:5000/widget"), "localhost:5000/widget");
        assert_eq!(
            path_names("ghcr.io/acme/widget@sha256:00"),
            ["widget", "acme"]
        );
        assert_eq!(
            path_names("ghcr.io/acme/walle/operator:v1"),
            ["operator", "walle", "acme"]
        );
        assert_eq!(path_names("localhost:5000/widget"), ["widget"]);
        assert_eq!(path_names("widget:latest"), ["widget"]);
        let none = |_: &str| false;
        assert!(same_or_around("widget-operator", "widget", none));
        assert!(same_or_around("5spot", "5-spot", none));
        assert!(!same_or_around("widgetry", "widget", none));
        // Words around a program's name are the project's or say nothing.
        assert!(!same_or_around("workflow-controller", "controller", none));
        assert!(same_or_around("ame-controller", "controller", |w| w == "ame"));
    }
}
