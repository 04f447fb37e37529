//! The addon's allocator on Linux with glibc: blocks of up to 64 KiB from
//! mimalloc, larger ones from the system's malloc.
//!
//! Why not glibc's malloc alone: a SQLite thread allocates each result
//! (its rows, its values, the completion) and the JS thread or the sweeper
//! frees it; the JS thread allocates each job and a SQLite thread frees it.
//! glibc frees a block into the arena of the thread that allocated it,
//! under that arena's lock, so the JS thread waited on the readers' locks
//! (and they on its), and a holder waiting for a CPU made the JS thread
//! wait with it: thousands of futex waits a second in the JS thread's
//! profile with 256 calls in flight (docs/cores.md). mimalloc frees a block
//! from another thread without a lock.
//!
//! Why not mimalloc alone: it keeps a large block freed by another thread
//! in the allocating thread's segment until that thread allocates again. A
//! `Database.restore` reads 1 MiB ranges on the store's threads and frees
//! them on the restore's: with mimalloc for everything its peak memory
//! grew by 266 MiB for a 256 MiB database, against 30 MiB with glibc.
//! Blocks past mimalloc's medium size go to glibc, which maps them on
//! their own or takes them from an arena as it always did.
//!
//! Every block is freed by the allocator that made it: Rust hands `dealloc`
//! and `realloc` the layout the block was allocated with, and its size
//! picks the allocator again.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;

use mimalloc::MiMalloc;

/// The largest block mimalloc serves: its medium size on 64-bit targets.
const SMALL_MAX: usize = 64 * 1024;

struct Split;

#[global_allocator]
static ALLOCATOR: Split = Split;

fn small(size: usize) -> bool {
    size <= SMALL_MAX
}

// SAFETY: each method forwards to an allocator that upholds GlobalAlloc's
// contract, chosen by the block's size alone; a block's size is the same
// at its allocation and at its `dealloc` / `realloc` (Rust passes the
// layout it was allocated with), so it always goes back to the allocator
// that made it. A `realloc` that crosses the line allocates from the other
// allocator, copies and frees, as GlobalAlloc's default `realloc` does.
unsafe impl GlobalAlloc for Split {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's layout is valid and of non-zero size.
        unsafe {
            if small(layout.size()) {
                MiMalloc.alloc(layout)
            } else {
                System.alloc(layout)
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        unsafe {
            if small(layout.size()) {
                MiMalloc.alloc_zeroed(layout)
            } else {
                System.alloc_zeroed(layout)
            }
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        // SAFETY: `block` came from `alloc` with `layout`, so from the
        // allocator that `layout.size()` picks.
        unsafe {
            if small(layout.size()) {
                MiMalloc.dealloc(block, layout)
            } else {
                System.dealloc(block, layout)
            }
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (small(layout.size()), small(new_size)) {
            // SAFETY: the block is the picked allocator's, and the caller
            // guarantees `new_size` is valid for the layout's alignment.
            (true, true) => unsafe { MiMalloc.realloc(block, layout, new_size) },
            // SAFETY: as above.
            (false, false) => unsafe { System.realloc(block, layout, new_size) },
            _ => {
                // SAFETY: the caller guarantees that `new_size`, rounded up
                // to the alignment, does not overflow; the new block is
                // `new_size` bytes, the old one `layout.size()`, and they do
                // not overlap; the old block is freed with its own layout.
                unsafe {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let moved = self.alloc(new_layout);
                    if !moved.is_null() {
                        ptr::copy_nonoverlapping(block, moved, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                    moved
                }
            }
        }
    }
}
