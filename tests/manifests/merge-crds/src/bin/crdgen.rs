use kube::core::crd::merge_crds;
use kube::CustomResourceExt;
use merge_crds::{v1, v2};

fn main() {
    let crd = merge_crds(vec![v1::Widget::crd(), v2::Widget::crd()], "v2").unwrap();
    print!("{}", serde_yaml::to_string(&crd).unwrap());
}
