//! The timing check's judging (see `crate::flush`): filled in by its helper.
