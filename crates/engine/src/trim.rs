//! Giving memory freed by closed connections back to the system. glibc's
//! malloc keeps one arena per thread that allocated, and frees into it
//! without returning the pages: a process whose thousands of idle
//! connections closed would keep the memory they used, hundreds of KiB
//! each. So a second after connections close (once a second at most, see
//! `timers::trim_soon`), the timer thread asks malloc to hand back every
//! free page of every arena. Other allocators return memory on their own:
//! elsewhere this does nothing.

/// Hands free heap pages back to the system; whether any were.
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: malloc_trim takes each arena's lock while it walks it and
        // touches only free chunks; it is safe to call from any thread at
        // any time.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}
