//! Part of the power-cut check (see `crate::flush`): filled in by its helper.
