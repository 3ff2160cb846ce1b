//! Facts about the machine a result was measured on, for reports (through sysinfo).

use serde::Serialize;

/// The machine, as a result file records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct HostInfo {
    pub hostname: Option<String>,
    pub kernel: Option<String>,
    pub os: Option<String>,
    pub cpu: Option<String>,
    pub cpus: usize,
    pub memory_bytes: u64,
}

/// Reads what it can; missing facts stay `None`.
pub fn host_info() -> HostInfo {
    use sysinfo::System;
    let mut info = HostInfo {
        hostname: System::host_name().ok(),
        kernel: System::kernel_version().ok(),
        os: System::long_os_version().ok(),
        ..HostInfo::default()
    };
    if let Ok(mut sys) = System::new() {
        sys.refresh_cpu_all();
        sys.refresh_memory();
        info.cpus = sys.cpus().len();
        info.cpu = sys.cpus().first().map(|c| c.brand().trim().to_string());
        info.memory_bytes = sys.total_memory();
    }
    info
}

/// The CPUs this process may run on (its affinity mask and cgroup quota), at least 1.
pub fn usable_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// Memory the kernel says can be given to new work without swapping (`MemAvailable`), in
/// bytes; `None` when it cannot be read.
pub fn available_memory() -> Option<u64> {
    let mut sys = sysinfo::System::new().ok()?;
    sys.refresh_memory();
    Some(sys.available_memory()).filter(|&bytes| bytes > 0)
}
