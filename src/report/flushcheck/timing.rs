//! The timing check's report: text and JSON (filled in by its helper).
