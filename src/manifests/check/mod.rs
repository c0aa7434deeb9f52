//! Stage 4: checking the code against the documents. [`rbac_check`] holds
//! the requests each function makes ([`crate::calls`]) against the role the
//! markers (or the project's shipped roles) grant.

pub mod rbac_check;
