pub mod cronjob;
pub mod pod;
