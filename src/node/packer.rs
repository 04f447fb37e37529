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

use napi::{sys, Result};

use super::js::{check, Cx, Js};

/// Arguments per call of `pack`. Each is a stack slot in V8, whose stack is
/// about 1 MB; 8,192 slots (64 KiB) leave room for whatever runs the drain.
const PACK_CHUNK: usize = 8192;

/// Column lists whose JS names are cached. A server has a few dozen
/// statements; past this many lists, the cache starts over.
const COLUMN_CACHE_CAPACITY: usize = 512;

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

/// FNV-1a: the cache is looked up once per result, with a few short
/// names as the key, where SipHash's setup would cost more than the
/// hashing. The keys are column names of the application's own queries.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h = (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type ColumnCache = HashMap<Box<[String]>, sys::napi_ref, BuildHasherDefault<Fnv>>;

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
pub fn column_names(cx: Cx, names: &[String]) -> Result<Js> {
    let cached = COLUMNS.with(|c| c.borrow().get(names).copied());
    if let Some(reference) = cached {
        let mut value = std::ptr::null_mut();
        // SAFETY: the reference was created in this environment (the cache
        // is a thread local cleared when the environment ends) and is
        // deleted only when it leaves the cache.
        check(unsafe { sys::napi_get_reference_value(cx.0, reference, &mut value) })?;
        return Ok(Js(value));
    }
    let mut packer = Packer::new(cx, names.len());
    for name in names {
        packer.push(cx.string(name)?);
    }
    let array = packer.finish()?;
    let mut reference = std::ptr::null_mut();
    // SAFETY: live env and the array just made in it.
    check(unsafe { sys::napi_create_reference(cx.0, array.0, 1, &mut reference) })?;
    COLUMNS.with(|c| {
        let mut cache = c.borrow_mut();
        if cache.len() >= COLUMN_CACHE_CAPACITY {
            for (_, old) in cache.drain() {
                // SAFETY: a live reference of this environment, leaving the
                // cache (nothing else holds it).
                unsafe { sys::napi_delete_reference(cx.0, old) };
            }
        }
        cache.insert(names.into(), reference);
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
