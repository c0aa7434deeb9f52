//! Stage 4: checking the code against the documents. [`calls`] finds the
//! kube-rs requests each function makes; [`rbac_check`] holds them against
//! the role the markers (or the project's shipped roles) grant.

pub mod calls;
pub mod rbac_check;
