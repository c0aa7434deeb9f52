//! Types reached through every kind of path.

use kube::CustomResource;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Reexported;
use crate::common::{self, Level as Lvl};
use crate::globbed::Issuer;
use k8s_openapi::api::core::v1 as corev1;

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(group = "paths.example.com", version = "v1", kind = "Paths")]
#[serde(rename_all = "camelCase")]
pub struct PathsSpec {
    pub reexported: Reexported,
    pub renamed: Lvl,
    pub through_module: common::Level,
    pub absolute: crate::common::Shared,
    pub relative: super::super::common::Shared,
    pub aliased: Count,
    pub inline_module: inner::Inner,
    pub k8s: Option<corev1::LocalObjectReference>,
    pub issuer: Issuer,
}

type Count = u32;

mod inner {
    #[derive(serde::Deserialize, serde::Serialize, Clone, Debug, schemars::JsonSchema)]
    pub struct Inner {
        pub ok: bool,
    }
}
