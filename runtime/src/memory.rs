//! How much memory a run may take: checked before anything large is
//! allocated, so that a huge bound gets a diagnostic naming the tensor that
//! does not fit instead of an allocation abort or the OOM killer.

/// Bytes the process can still allocate: the smaller of the system's
/// `MemAvailable` and the headroom left under `RLIMIT_AS`, each with the
/// bytes cached for reuse; `None` when neither is known.
pub fn available_memory() -> Option<u64> {
    let available = std::fs::read_to_string("/proc/meminfo").ok().and_then(|info| {
        let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    });
    let headroom = address_space_headroom();
    // Blocks cached for reuse (crate::host_pool) are the process's to use
    // again, and given back where a mapping is refused.
    let cached = crate::host_pool::cached_bytes() as u64;
    let (available, headroom) =
        (available.map(|a| a.saturating_add(cached)), headroom.map(|h| h.saturating_add(cached)));
    match (available, headroom) {
        (Some(a), Some(h)) => Some(a.min(h)),
        (a, h) => a.or(h),
    }
}

/// `RLIMIT_AS` minus the address space already mapped, when limited.
fn address_space_headroom() -> Option<u64> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    if unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) } != 0 || limit.rlim_cur == libc::RLIM_INFINITY {
        return None;
    }
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmSize:"))?;
    let used = line.split_whitespace().nth(1)?.parse::<u64>().ok()?.checked_mul(1024)?;
    Some(limit.rlim_cur.saturating_sub(used))
}

/// Bytes of `count` elements of `element_bytes` each, or `None` on overflow.
pub fn bytes_of(dims: impl IntoIterator<Item = u64>, element_bytes: u64) -> Option<u64> {
    dims.into_iter().try_fold(element_bytes, |acc, d| acc.checked_mul(d))
}

/// Checks that `needed` more bytes fit; `what` names them in the error.
pub fn check_fits(needed: Option<u64>, what: &str) -> Result<(), String> {
    match (needed, available_memory()) {
        (None, _) => Err(format!("{what} needs more than 2^64 bytes")),
        (Some(n), Some(available)) if n > available => {
            Err(format!("{what} needs {n} bytes ({}), but only {available} bytes are available", human(n)))
        }
        _ => Ok(()),
    }
}

/// `1.5 GiB`-style sizes for messages.
pub fn human(bytes: u64) -> String {
    let units = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < units.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} bytes") } else { format!("{value:.1} {}", units[unit]) }
}
