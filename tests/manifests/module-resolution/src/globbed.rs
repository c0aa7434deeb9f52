//! Types re-exported with `pub use ..::*` from modules that glob-import
//! another crate privately: seen from outside, a private glob binds
//! nothing, so `Issuer` is the one of `types`.

pub use self::parts::*;
pub use self::types::*;

mod parts {
    #[allow(unused_imports)]
    use serde_json::*;
}

mod types {
    #[derive(serde::Deserialize, serde::Serialize, Clone, Debug, schemars::JsonSchema)]
    pub struct Issuer {
        pub name: String,
    }
}
