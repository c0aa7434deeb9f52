//! `rsop update`'s core: the 3-way merge of a project's files ([`merge`],
//! with `Cargo.toml` merged by its keys in [`toml_merge`]), what an old
//! PROJECT lacks read back from its scaffold ([`infer`]), and the git
//! plumbing that keeps the pristine scaffold under `refs/rsop/` ([`git`]).
//! The command that drives them, and re-runs the recorded commands, is
//! `commands::update`.

pub mod git;
pub mod infer;
pub mod merge;
pub mod toml_merge;
