use kube::CustomResourceExt;
use owned_kinds::api::{Backup, Restore};

fn main() {
    for crd in [Backup::crd(), Restore::crd()] {
        print!("---\n{}", serde_yaml::to_string(&crd).unwrap());
    }
}
