//! Path arithmetic that does not touch the disk.

use std::path::{Component, Path, PathBuf};

/// `a/./b/../c` as `a/c`, by its text alone: for a path that may not exist
/// (yet), or whose `..` must not follow symbolic links.
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            // `..` removes the last name; leading ones stay (`../a`), and
            // the root has no parent.
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(".."),
            },
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_are_resolved_by_the_text() {
        assert_eq!(
            lexical(Path::new("/w/./src/../shared/x.rs")),
            Path::new("/w/shared/x.rs")
        );
        assert_eq!(lexical(Path::new("a/b/..")), Path::new("a"));
        assert_eq!(lexical(Path::new("/a/b/.")), Path::new("/a/b"));
        assert_eq!(
            lexical(Path::new("./../op/./Cargo.toml")),
            Path::new("../op/Cargo.toml")
        );
        assert_eq!(lexical(Path::new("/..")), Path::new("/"));
    }
}
