//! `rsop version`: rsop's own version and the versions of what it generates.

use std::io::Write;

use super::say;
use crate::Result;
use crate::output::Outcome;
use crate::versions;

pub fn run(out: &mut dyn Write) -> Result<Outcome> {
    say(
        out,
        &format!(
            "rsop {}\ngenerates: kube {}, k8s-openapi {} (Kubernetes {}), schemars {}\n",
            env!("CARGO_PKG_VERSION"),
            versions::KUBE,
            versions::K8S_OPENAPI,
            versions::KUBERNETES,
            versions::SCHEMARS
        ),
    )?;
    Ok(Outcome::Done)
}
