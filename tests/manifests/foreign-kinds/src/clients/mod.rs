pub mod monitoring;
pub mod snapshot;
pub mod traefik;
