//! Headless output: what the commands print, as text (80 columns) and JSON.

pub mod cache;
pub mod list;
pub mod restore;
pub mod run;
pub mod sched;
pub mod smart;
pub mod table;
