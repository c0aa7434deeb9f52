//! Prints the CRDs the operator installs.

use hand_written_crd::{App, Legacy};
use kube::CustomResourceExt;

fn main() {
    for crd in [App::crd(), Legacy::crd()] {
        print!("---\n{}", serde_yaml::to_string(&crd).expect("a CRD serializes"));
    }
}
