//! Headless output: what the commands print, as text (80 columns) and JSON.

pub mod list;
pub mod restore;
pub mod table;
