//! Who we run as, and the hint to give when the kernel says no.

/// True when running with root's effective user id.
pub fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// The hint for an EPERM/EACCES from an operation that needs privileges.
pub const NEEDS_ROOT: &str = "needs root (run as root, e.g. with sudo)";
