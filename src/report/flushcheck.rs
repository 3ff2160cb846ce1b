//! What `disktriage flushcheck` prints: the timing check's verdict (`timing`) and the
//! power-cut check's record and verify reports (`powercut`), as text and JSON.

pub mod powercut;
pub mod timing;
