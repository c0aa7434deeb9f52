//! Build script: rebuild when a template changes. `include_dir` embeds
//! `templates/` but cargo does not know the files are inputs.

fn main() {
    println!("cargo:rerun-if-changed=templates");
}
