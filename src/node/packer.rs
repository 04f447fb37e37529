//! Building JS arrays fast, on the JS thread: `Packer` collects value
//! handles and turns them into one array with a single call of the
//! environment's `pack` function, and column-name arrays are made once per
//! column list and cached. It holds only JS references of this environment
//! (thread locals, dropped when the environment ends) and knows nothing of
//! jobs or queues.

use std::cell::RefCell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr;
use std::sync::Arc;

use napi::{sys, Result};

use super::js::{check, Cx, Js};

/// Arguments per call of `pack`. Each is a stack slot in V8, whose stack is
/// about 1 MB; 8,192 slots (64 KiB) leave room for whatever runs the drain.
const PACK_CHUNK: usize = 8192;

/// Column lists whose JS names are cached: one per statement prepared on
/// each connection (a server has a few dozen statements, and up to five
/// connections prepare each); past this many lists, the cache starts over.
const COLUMN_CACHE_CAPACITY: usize = 2048;

/// Values on their way into one JS array.
pub struct Packer {
    pub cx: Cx,
    handles: Vec<sys::napi_value>,
}

impl Packer {
    pub fn new(cx: Cx, capacity: usize) -> Packer {
        Packer {
            cx,
            handles: Vec::with_capacity(capacity),
        }
    }

    pub fn push(&mut self, value: Js) {
        self.handles.push(value.0);
    }

    pub fn number(&mut self, v: f64) -> Result<()> {
        self.push(self.cx.number(v)?);
        Ok(())
    }

    /// The element the next push fills.
    pub fn position(&self) -> usize {
        self.handles.len()
    }

    /// Pushes `value` as element `slot` (a position `protocol` names),
    /// which must be the next one: a payload written out of its named
    /// order fails the call instead of reaching lib/ misread.
    pub fn put(&mut self, slot: usize, value: Js) -> Result<()> {
        if self.handles.len() != slot {
            return Err(napi::Error::new(
                napi::Status::GenericFailure,
                format!(
                    "offloop internal error: payload slot {slot} written at {}",
                    self.handles.len()
                ),
            ));
        }
        self.push(value);
        Ok(())
    }

    /// The JS array of every value pushed, in order.
    pub fn finish(self) -> Result<Js> {
        let (pack, join) = packers(self.cx)?;
        if self.handles.len() <= PACK_CHUNK {
            return self.cx.call(pack, &self.handles);
        }
        let mut parts = Vec::with_capacity(self.handles.len().div_ceil(PACK_CHUNK));
        for chunk in self.handles.chunks(PACK_CHUNK) {
            parts.push(self.cx.call(pack, chunk)?.0);
        }
        // The parts are few (one per 8,192 values) and each is one argument.
        self.cx.call(join, &parts)
    }
}

/// The column cache's keys are addresses, hashed with one multiply.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8) | u64::from(*b);
        }
    }

    fn write_usize(&mut self, address: usize) {
        self.0 = (address as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// A column list by the address of its names, which the cache keeps alive
/// (so no other list can take that address while it is cached), with the
/// JS array made for it. A statement hands out the same list on every call
/// (see `RawStatement::column_names`), so a result finds its array without
/// hashing a name.
type ColumnCache =
    HashMap<usize, (Arc<[String]>, sys::napi_ref), BuildHasherDefault<AddressHasher>>;

thread_local! {
    /// Column lists to arrays of their names, held by reference.
    static COLUMNS: RefCell<ColumnCache> = RefCell::new(ColumnCache::default());
}

/// Drops this environment's references when it ends (Node frees the
/// referenced values themselves).
pub fn forget_environment() {
    PACKERS.with(|p| p.borrow_mut().take());
    COLUMNS.with(|c| c.borrow_mut().clear());
}

/// The JS array of `names`, the same array for the same list: lib/rows.js
/// only reads it.
pub fn column_names(cx: Cx, names: &Arc<[String]>) -> Result<Js> {
    let address = Arc::as_ptr(names) as *const String as usize;
    let cached = COLUMNS.with(|c| c.borrow().get(&address).map(|(_, r)| *r));
    if let Some(reference) = cached {
        let mut value = std::ptr::null_mut();
        // SAFETY: the reference was created in this environment (the cache
        // is a thread local cleared when the environment ends) and is
        // deleted only when it leaves the cache.
        check(unsafe { sys::napi_get_reference_value(cx.0, reference, &mut value) })?;
        return Ok(Js(value));
    }
    let mut packer = Packer::new(cx, names.len());
    for name in names.iter() {
        packer.push(cx.string(name)?);
    }
    let array = packer.finish()?;
    let mut reference = std::ptr::null_mut();
    // SAFETY: live env and the array just made in it.
    check(unsafe { sys::napi_create_reference(cx.0, array.0, 1, &mut reference) })?;
    COLUMNS.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= COLUMN_CACHE_CAPACITY {
            for (_, (_, old)) in cache.drain() {
                // SAFETY: a live reference of this environment, leaving the
                // cache (nothing else holds it).
                unsafe { sys::napi_delete_reference(cx.0, old) };
            }
        }
        cache.insert(address, (names.clone(), reference));
    });
    Ok(array)
}

thread_local! {
    /// `[pack, join]` of this environment (see `init`).
    static PACKERS: RefCell<Option<[Reference; 2]>> = const { RefCell::new(None) };
}

/// Keeps this environment's `pack` (`(...values) => values`) and `join`
/// (`(...arrays) => [].concat(...arrays)`) functions.
pub fn init(cx: Cx, pack: Js, join: Js) -> Result<()> {
    let refs = [Reference::new(cx, pack)?, Reference::new(cx, join)?];
    PACKERS.with(|p| *p.borrow_mut() = Some(refs));
    Ok(())
}

/// A strong reference to a JS value of this environment, held for its life.
#[derive(Clone, Copy)]
struct Reference(sys::napi_ref);

impl Reference {
    fn new(cx: Cx, value: Js) -> Result<Reference> {
        let mut r = ptr::null_mut();
        // SAFETY: live env and a value of this call; `r` receives the handle.
        check(unsafe { sys::napi_create_reference(cx.0, value.0, 1, &mut r) })?;
        Ok(Reference(r))
    }

    fn value(self, cx: Cx) -> Result<Js> {
        let mut v = ptr::null_mut();
        // SAFETY: the reference was created in this environment (a thread
        // local, cleared when it ends) and is never deleted before then.
        check(unsafe { sys::napi_get_reference_value(cx.0, self.0, &mut v) })?;
        Ok(Js(v))
    }
}

/// The environment's `pack` (`(...values) => values`) and `join`
/// (`(...arrays) => [].concat(...arrays)`) functions: V8 builds an array
/// from a call's arguments far faster than Node-API sets its elements one
/// by one (see `Packer`).
pub fn packers(cx: Cx) -> Result<(Js, Js)> {
    let refs = PACKERS.with(|p| *p.borrow());
    let [pack, join] = refs.ok_or_else(|| {
        napi::Error::new(
            napi::Status::GenericFailure,
            "offloop: init() was not called",
        )
    })?;
    Ok((pack.value(cx)?, join.value(cx)?))
}
