//! Which process we are, and whether another one is still alive: the journal records the
//! owner of each change so `disktriage restore` leaves a running session's changes alone.

use std::fs;

use super::parse::parse_stat_start_time;
use crate::model::Owner;

/// This process: its pid and start time (clock ticks after boot, `/proc/self/stat` field 22).
pub fn current_owner() -> Owner {
    let pid = std::process::id();
    let start_time = fs::read_to_string("/proc/self/stat")
        .ok()
        .as_deref()
        .and_then(parse_stat_start_time)
        .unwrap_or(0);
    Owner { pid, start_time }
}

/// True when the process that recorded `owner` still runs: same pid and same start time (a
/// reused pid has another).
pub fn is_alive(owner: &Owner) -> bool {
    if owner.pid == 0 {
        return false;
    }
    match fs::read_to_string(format!("/proc/{}/stat", owner.pid)) {
        Ok(text) => parse_stat_start_time(&text) == Some(owner.start_time),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let me = current_owner();
        assert!(me.start_time > 0);
        assert!(is_alive(&me));
        assert!(!is_alive(&Owner {
            pid: me.pid,
            start_time: me.start_time + 1
        }));
        assert!(!is_alive(&Owner {
            pid: 0,
            start_time: 0
        }));
        // Above pid_max (4194304 at most): never a live process.
        assert!(!is_alive(&Owner {
            pid: 99_999_999,
            start_time: 1
        }));
    }
}
