//! The power-cut check's reports: text and JSON (filled in by its helper).
