//! Headless commands that need more than a few lines: each turns parsed arguments into calls
//! of the library and prints the result.

pub mod run;
