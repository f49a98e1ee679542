//! A per-call arena: the global allocator a component can opt into with
//! [`use_call_arena!`](crate::use_call_arena), for matchers whose calls
//! make many short-lived allocations (tokens, n-gram tables, the verdict's
//! message and extras).
//!
//! While the export runs `evaluate`, allocations are bumped out of a few
//! large chunks instead of going through the system allocator (dlmalloc on
//! `wasm32-unknown-unknown`); freeing one only counts it down, except that
//! freeing or growing the latest allocation moves the bump pointer back or
//! on. At the start of the next call every chunk whose allocations were all
//! freed is reused from its start, so a warm instance allocates at the cost
//! of a pointer bump and never returns to dlmalloc. Memory allocated outside
//! a call (the host's copies of the arguments, statics made in `describe`)
//! stays with the system allocator.
//!
//! What escapes a call (a static set up during it, a leak) only pins its
//! chunk: that chunk is retired, not reused, and goes back to the system
//! allocator once its last allocation is freed. One call's chunks together
//! hold at most [`ARENA_LIMIT`] bytes; past that, allocations of that call
//! go to the system allocator, so a call that allocates much more than it
//! keeps cannot exhaust the sandbox's memory because of the arena.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;

/// The size of the first chunk; each further chunk of a call is at least
/// twice the last one's size.
const FIRST_CHUNK: usize = 64 << 10;

/// How many bytes one call's chunks may hold together.
pub const ARENA_LIMIT: usize = 16 << 20;

/// How many chunks (in use, reusable or retired) the arena tracks.
const CHUNKS: usize = 24;

/// The alignment of every chunk, and the largest alignment the arena serves
/// (anything stricter goes to the system allocator).
const CHUNK_ALIGN: usize = 16;

/// One chunk obtained from the system allocator.
#[derive(Clone, Copy)]
struct Chunk {
    /// Its first byte; 0 for an unused table entry.
    start: usize,
    /// One past its last byte.
    end: usize,
    /// Allocations in it not yet freed.
    live: usize,
    /// Retired: something allocated in it outlived its call, so it is not
    /// reused, only freed once `live` reaches 0.
    retired: bool,
}

const NO_CHUNK: Chunk = Chunk { start: 0, end: 0, live: 0, retired: false };

/// The arena's state. A component instance is single-threaded.
struct State {
    /// Whether a call is running (allocations go to the arena).
    in_call: bool,
    chunks: [Chunk; CHUNKS],
    /// The chunk being bumped, an index into `chunks` (meaningful when
    /// `next != 0`).
    current: usize,
    /// The bump pointer in the current chunk; 0 when the call has no chunk
    /// yet.
    next: usize,
    /// The start of the latest allocation, which can be freed or grown in
    /// place.
    latest: usize,
    /// Bytes of chunks (not retired) this call may bump through.
    held: usize,
}

struct Arena(UnsafeCell<State>);

// SAFETY: a WebAssembly component instance runs on one thread, and the
// arena is only installed on `wasm32` (see `use_call_arena!`).
unsafe impl Sync for Arena {}

static ARENA: Arena = Arena(UnsafeCell::new(State {
    in_call: false,
    chunks: [NO_CHUNK; CHUNKS],
    current: 0,
    next: 0,
    latest: 0,
    held: 0,
}));

/// The arena's state.
///
/// # Safety
/// No other reference to it may be alive: each entry point below takes it
/// once, and the system allocator never calls back into the arena.
unsafe fn state() -> &'static mut State {
    unsafe { &mut *ARENA.0.get() }
}

/// Starts a call: chunks whose allocations are all freed are reused from
/// their start; chunks that still hold something are retired.
#[doc(hidden)]
pub fn begin_call() {
    // SAFETY: called by the export outside any allocation.
    let state = unsafe { state() };
    state.held = 0;
    for chunk in state.chunks.iter_mut().filter(|c| c.start != 0) {
        if chunk.live > 0 {
            chunk.retired = true;
        } else if !chunk.retired {
            state.held += chunk.end - chunk.start;
        }
    }
    state.next = 0;
    state.latest = 0;
    state.in_call = true;
}

/// Ends a call: later allocations go to the system allocator.
#[doc(hidden)]
pub fn end_call() {
    // SAFETY: called by the export outside any allocation.
    unsafe { state() }.in_call = false;
}

impl State {
    /// The index of the chunk holding `ptr`, if any.
    fn chunk_of(&self, ptr: usize) -> Option<usize> {
        self.chunks.iter().position(|c| c.start != 0 && c.start <= ptr && ptr < c.end)
    }

    /// Bumps `layout` out of the current chunk, or the next one that fits.
    fn bump(&mut self, layout: Layout) -> Option<*mut u8> {
        if !self.in_call || layout.align() > CHUNK_ALIGN {
            return None;
        }
        loop {
            if self.next != 0 {
                let chunk = &mut self.chunks[self.current];
                let start = self.next.next_multiple_of(layout.align());
                if let Some(end) = start.checked_add(layout.size())
                    && end <= chunk.end
                {
                    chunk.live += 1;
                    self.next = end;
                    self.latest = start;
                    return Some(start as *mut u8);
                }
            }
            self.next_chunk(layout.size())?;
        }
    }

    /// Moves to a free chunk after the current one with room for `size`
    /// bytes, making one if there is none.
    fn next_chunk(&mut self, size: usize) -> Option<()> {
        let after = if self.next == 0 { 0 } else { self.current + 1 };
        let reusable = |c: &Chunk| c.start != 0 && !c.retired && c.live == 0 && c.end - c.start >= size;
        // Chunks are kept in the order they were made; a reusable one after
        // the current one is free in this call.
        if let Some(offset) = self.chunks[after..].iter().position(reusable) {
            self.current = after + offset;
        } else {
            let previous =
                if self.next == 0 { 0 } else { self.chunks[self.current].end - self.chunks[self.current].start };
            let bytes = (previous * 2).max(FIRST_CHUNK).max(size.next_multiple_of(CHUNK_ALIGN));
            if self.held + bytes > ARENA_LIMIT {
                return None;
            }
            // A free entry after the current chunk keeps the order.
            let slot = after + self.chunks[after..].iter().position(|c| c.start == 0)?;
            // SAFETY: the layout has a non-zero size and a valid alignment.
            let start = unsafe { System.alloc(Layout::from_size_align(bytes, CHUNK_ALIGN).ok()?) } as usize;
            if start == 0 {
                return None;
            }
            self.chunks[slot] = Chunk { start, end: start + bytes, live: 0, retired: false };
            self.held += bytes;
            self.current = slot;
        }
        self.next = self.chunks[self.current].start;
        Some(())
    }

    /// Frees an arena allocation in chunk `index`.
    fn free(&mut self, index: usize, ptr: usize) {
        let chunk = &mut self.chunks[index];
        chunk.live -= 1;
        if chunk.retired && chunk.live == 0 {
            let layout = Layout::from_size_align(chunk.end - chunk.start, CHUNK_ALIGN).expect("a chunk's layout");
            // SAFETY: the chunk was allocated with this layout and nothing
            // in it is alive.
            unsafe { System.dealloc(chunk.start as *mut u8, layout) };
            *chunk = NO_CHUNK;
        } else if self.next != 0 && index == self.current && ptr == self.latest {
            // The latest allocation: its bytes can be bumped again.
            self.next = ptr;
            self.latest = 0;
        }
    }
}

/// The global allocator of a component that opted into the arena; see the
/// module's documentation.
pub struct CallArena;

// SAFETY: every pointer handed out is either the system allocator's, or a
// range of an arena chunk that no other live allocation overlaps: the bump
// pointer only moves back over the latest allocation when it is freed, and a
// chunk is reused only when all its allocations were freed.
unsafe impl GlobalAlloc for CallArena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the only reference to the state for this call.
        let state = unsafe { state() };
        match state.bump(layout) {
            Some(ptr) => ptr,
            // SAFETY: forwarded as received.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the only reference to the state for this call.
        let state = unsafe { state() };
        match state.chunk_of(ptr as usize) {
            Some(index) => state.free(index, ptr as usize),
            // SAFETY: not in a chunk, so the system allocator's.
            None => unsafe { System.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the only reference to the state for this call; it is not
        // used after the calls below, which take it again.
        let state = unsafe { state() };
        let address = ptr as usize;
        let Some(index) = state.chunk_of(address) else {
            // SAFETY: forwarded as received: the system allocator's.
            return unsafe { System.realloc(ptr, layout, new_size) };
        };
        // The latest allocation grows or shrinks in place when its chunk
        // has room.
        if state.next != 0
            && index == state.current
            && address == state.latest
            && address.checked_add(new_size).is_some_and(|end| end <= state.chunks[index].end)
        {
            state.next = address + new_size;
            return ptr;
        }
        if new_size <= layout.size() {
            return ptr;
        }
        // SAFETY: the new layout's size is non-zero and its alignment is
        // the old one's.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as `GlobalAlloc::realloc`'s default: allocate, copy, free.
        unsafe {
            let new = self.alloc(new_layout);
            if !new.is_null() {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size());
                self.dealloc(ptr, layout);
            }
            new
        }
    }
}

/// Makes [`CallArena`] the component's global allocator (on `wasm32` only;
/// native builds and tests keep the system allocator). Put it next to
/// `export_matcher!`.
#[macro_export]
macro_rules! use_call_arena {
    () => {
        #[cfg(target_arch = "wasm32")]
        #[global_allocator]
        static ASSAY_CALL_ARENA: $crate::arena::CallArena = $crate::arena::CallArena;
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(size: usize) -> usize {
        // SAFETY: a non-zero size with alignment 8.
        unsafe { CallArena.alloc(Layout::from_size_align(size, 8).unwrap()) as usize }
    }

    fn free(ptr: usize, size: usize) {
        // SAFETY: allocated by `alloc` with this size.
        unsafe { CallArena.dealloc(ptr as *mut u8, Layout::from_size_align(size, 8).unwrap()) }
    }

    fn in_chunk(ptr: usize) -> bool {
        // SAFETY: no allocation runs meanwhile.
        unsafe { state() }.chunk_of(ptr).is_some()
    }

    /// The one test that uses the arena's static state (tests run on
    /// several threads; the arena is for single-threaded instances).
    #[test]
    fn calls_bump_reuse_and_retire() {
        // Outside a call: the system allocator.
        let outside = alloc(32);
        assert!(!in_chunk(outside));

        begin_call();
        let a = alloc(100);
        let b = alloc(50);
        assert!(in_chunk(a) && in_chunk(b));
        assert_eq!(b, (a + 100).next_multiple_of(8), "bumped right after the first");
        // Freeing the latest one lets its bytes be bumped again.
        free(b, 50);
        let c = alloc(10);
        assert_eq!(c, b);
        // Growing the latest one stays in place.
        // SAFETY: `c` is live with this layout.
        let grown = unsafe { CallArena.realloc(c as *mut u8, Layout::from_size_align(10, 8).unwrap(), 4000) } as usize;
        assert_eq!(grown, c);
        // More than the first chunk: a second, larger one.
        let big = alloc(FIRST_CHUNK * 3);
        assert!(in_chunk(big));
        free(outside, 32);
        end_call();
        free(a, 100);
        free(grown, 4000);
        free(big, FIRST_CHUNK * 3);

        // Everything was freed: the next call starts over in the same chunk.
        begin_call();
        let again = alloc(100);
        assert_eq!(again, a);
        let kept = alloc(8);
        end_call();
        free(again, 100);

        // `kept` outlived its call: its chunk is retired, and the next call
        // bumps elsewhere.
        begin_call();
        let elsewhere = alloc(100);
        assert_ne!(elsewhere, a);
        assert!(in_chunk(elsewhere));
        free(elsewhere, 100);
        // Past the limit, the system allocator.
        let huge = alloc(ARENA_LIMIT);
        assert!(!in_chunk(huge));
        free(huge, ARENA_LIMIT);
        end_call();
        // The retired chunk goes back to the system once `kept` is freed.
        free(kept, 8);
        assert!(!in_chunk(kept));
    }
}
