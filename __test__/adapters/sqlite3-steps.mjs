// The sqlite3 adapter's callbacks as promises, for its tests.

/** `fn(cb)` as a promise of the callback's `{ self, args }`. */
export const step = (fn) =>
  new Promise((resolve) =>
    fn(function (...args) {
      resolve({ self: this, args });
    }),
  );

/** `db.close(cb)` as a promise of its `{ self, args }`. */
export const close = (db) => step((cb) => db.close(cb));
