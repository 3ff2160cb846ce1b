//! Who we run as, the hint to give when the kernel says no, and what our threads cost.

/// True when running with root's effective user id.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The hint for an EPERM/EACCES from an operation that needs privileges.
pub const NEEDS_ROOT: &str = "needs root (run as root, e.g. with sudo)";

/// CPU time (user + system) of this whole process so far, including the kernel's io_uring
/// worker threads, which run in the process.
pub fn process_cpu_time() -> std::time::Duration {
    rusage_cpu(nix::sys::resource::UsageWho::RUSAGE_SELF)
}

/// How long the calling thread has waited on a run queue since it started
/// (`/proc/thread-self/schedstat`, second field); `None` when the kernel does not keep it.
pub fn thread_run_delay() -> Option<std::time::Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(std::time::Duration::from_nanos(ns))
}

/// CPU time of the terminated children this process has waited for.
pub fn children_cpu_time() -> std::time::Duration {
    rusage_cpu(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
}

fn rusage_cpu(who: nix::sys::resource::UsageWho) -> std::time::Duration {
    match nix::sys::resource::getrusage(who) {
        Ok(u) => {
            let tv = |t: nix::sys::time::TimeVal| {
                std::time::Duration::new(
                    t.tv_sec().max(0) as u64,
                    (t.tv_usec().max(0) as u32) * 1000,
                )
            };
            tv(u.user_time()) + tv(u.system_time())
        }
        Err(_) => std::time::Duration::ZERO,
    }
}

/// CPU time (user + system) the calling thread has used so far.
pub fn thread_cpu_time() -> std::time::Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(std::time::Duration::from)
        .unwrap_or_default()
}
