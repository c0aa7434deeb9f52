//! `rsop envtest use|list`: setup-envtest's workflows, over the same index
//! and store.

use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::{EnvtestCommand, EnvtestListArgs, EnvtestPrint, EnvtestStoreArgs, EnvtestUseArgs};
use crate::envtest::{self, Installed, Platform, Selector};
use crate::output::Outcome;
use crate::{Error, Result};

pub fn run(command: &EnvtestCommand, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    match command {
        EnvtestCommand::Use(args) => use_release(args, cwd, out),
        EnvtestCommand::List(args) => list(args, cwd, out),
    }
}

/// The store and platform the flags name.
fn settings(args: &EnvtestStoreArgs, cwd: &Path) -> Result<(PathBuf, Platform)> {
    let store = match &args.bin_dir {
        Some(dir) => cwd.join(dir),
        None => envtest::default_store()?,
    };
    let current = Platform::current();
    let platform = Platform {
        os: args.os.clone().unwrap_or(current.os),
        arch: args.arch.clone().unwrap_or(current.arch),
    };
    Ok((store, platform))
}

fn use_release(args: &EnvtestUseArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    if args.use_env
        && let Some(assets) = std::env::var_os("KUBEBUILDER_ASSETS").filter(|a| !a.is_empty())
    {
        print(out, args.print, None, &PathBuf::from(assets))?;
        return Ok(Outcome::Done);
    }
    let selector = Selector::parse(args.release.as_deref())?;
    let (store, platform) = settings(&args.store, cwd)?;
    let cached = cached(&store, &platform, &selector);
    // A release named in full that is cached needs no index; nor does any
    // request when only the cache may answer.
    let exact = matches!(selector, Selector::Exact(_));
    if exact || args.store.installed_only {
        if let Some(found) = cached.first() {
            return use_cached(out, args.print, found, &platform);
        }
        if args.store.installed_only {
            return Err(Error::user_with_help(
                format!(
                    "no cached envtest binaries{} on {platform} in `{}`",
                    match selector {
                        Selector::Latest => String::new(),
                        _ => format!(" for {}", describe(&selector)),
                    },
                    store.display()
                ),
                format!(
                    "run `rsop envtest use {}` where the network is reachable",
                    args.release.as_deref().unwrap_or("latest")
                ),
            ));
        }
    }
    let archives = match (envtest::fetch_index(&args.store.index), cached.first()) {
        (Ok(archives), _) => archives,
        // Offline, the newest matching release cached here serves, as `make test` needs after
        // `make setup-envtest` has run once; the note says it may not be the index's newest.
        (Err(err), Some(found)) => {
            let mut notes = anstream::stderr();
            writeln!(
                notes,
                "note: {err}; using the cached {} (`-i` skips the index)",
                found.version
            )
            .map_err(|e| Error::io("write to", "standard error", e))?;
            return use_cached(out, args.print, found, &platform);
        }
        (Err(err), None) => return Err(err),
    };
    let Some(archive) = archives
        .iter()
        .find(|a| a.platform == platform && selector.matches(&a.version))
    else {
        let newest = archives
            .iter()
            .find(|a| a.platform == platform)
            .map_or_else(
                || format!("it has none for {platform}"),
                |a| format!("the newest for {platform} is {}", a.version),
            );
        return Err(Error::user_with_help(
            format!(
                "the envtest index at {} has no {}: {newest}",
                args.store.index,
                describe(&selector)
            ),
            "`rsop envtest list` shows what it offers",
        ));
    };
    let path = match cached.iter().find(|c| c.version == archive.version) {
        Some(found) => found.path.clone(),
        None => envtest::download(archive, &store)?,
    };
    print(out, args.print, Some((&archive.version, &platform)), &path)?;
    Ok(Outcome::Done)
}

/// Prints where the cached release `found` is, as `use` does for any release.
fn use_cached(
    out: &mut dyn Write,
    what: EnvtestPrint,
    found: &Installed,
    platform: &Platform,
) -> Result<Outcome> {
    print(out, what, Some((&found.version, platform)), &found.path)?;
    Ok(Outcome::Done)
}

/// The releases cached in `store` for `platform` that `selector` matches,
/// newest first.
fn cached(store: &Path, platform: &Platform, selector: &Selector) -> Vec<Installed> {
    envtest::installed(store)
        .into_iter()
        .filter(|i| i.platform == *platform && selector.matches(&i.version))
        .collect()
}

fn describe(selector: &Selector) -> String {
    match selector {
        Selector::Latest => "release at all".to_string(),
        Selector::Minor(major, minor) => format!("{major}.{minor} release"),
        Selector::Exact(version) => format!("release {version}"),
    }
}

fn print(
    out: &mut dyn Write,
    format: EnvtestPrint,
    release: Option<(&semver::Version, &Platform)>,
    path: &Path,
) -> Result<()> {
    let text = match format {
        EnvtestPrint::Path => format!("{}\n", path.display()),
        // Single quotes keep a path with spaces whole; a quote in it closes
        // the string, adds an escaped quote and opens another.
        EnvtestPrint::Env => format!(
            "export KUBEBUILDER_ASSETS='{}'\n",
            path.display().to_string().replace('\'', r#"'"'"'"#)
        ),
        EnvtestPrint::Overview => match release {
            Some((version, platform)) => format!(
                "Version: {version}\nOS/Arch: {platform}\nPath: {}\n",
                path.display()
            ),
            None => format!("Path: {} (from KUBEBUILDER_ASSETS)\n", path.display()),
        },
    };
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("write to", "standard output", e))
}

fn list(args: &EnvtestListArgs, cwd: &Path, out: &mut dyn Write) -> Result<Outcome> {
    let selector = Selector::parse(args.release.as_deref())?;
    let (store, platform) = settings(&args.store, cwd)?;
    let cached = cached(&store, &platform, &selector);
    let mut lines: Vec<(semver::Version, &str)> = cached
        .iter()
        .map(|i| (i.version.clone(), "installed"))
        .collect();
    if !args.store.installed_only {
        for archive in envtest::fetch_index(&args.store.index)? {
            if archive.platform == platform
                && selector.matches(&archive.version)
                && !cached.iter().any(|c| c.version == archive.version)
            {
                lines.push((archive.version, "available"));
            }
        }
    }
    lines.sort_by(|a, b| b.0.cmp(&a.0));
    let text = lines
        .iter()
        .fold(String::new(), |mut text, (version, state)| {
            let _ = writeln!(text, "({state})\tv{version}\t{platform}");
            text
        });
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io("write to", "standard output", e))?;
    Ok(Outcome::Done)
}
