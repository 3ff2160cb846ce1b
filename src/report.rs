//! Headless output: what the commands print, as text tables and JSON.

pub mod list;
pub mod run;
pub mod table;
