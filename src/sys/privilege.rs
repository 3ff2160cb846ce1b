//! Who we run as, the hint to give when the kernel says no, and what our threads cost.

/// True when running with root's effective user id.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The hint for an EPERM/EACCES from an operation that needs privileges.
pub const NEEDS_ROOT: &str = "needs root (run as root, e.g. with sudo)";

/// CPU time the calling thread has used so far (user + system).
pub fn thread_cpu_time() -> std::time::Duration {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .map(std::time::Duration::from)
        .unwrap_or_default()
}
