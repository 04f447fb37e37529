'use strict';

// sqlite3.verbose(): long stack traces. A method wrapped here remembers
// where it was called from; an error its callback gets then carries that
// place after its own stack. This file owns the wrapping only.

const util = require('node:util');

// The frames of this file say nothing about the caller.
function ownFramesOut(stack) {
  return stack.split('\n').filter((line) => !line.includes(__filename));
}

/** Wraps `object[name]` so that its callback's error names the call. */
function extendTrace(object, name) {
  const method = object[name];
  object[name] = function (...args) {
    const origin = new Error();
    const call = `${object.constructor.name}#${name}(${args.map((a) => util.inspect(a, false, 0)).join(', ')})`;
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = function (...results) {
        const err = results[0];
        if (err && err.stack && !err.__augmented) {
          err.stack = `${ownFramesOut(err.stack).join('\n')}\n--> in ${call}\n${ownFramesOut(origin.stack).slice(1).join('\n')}`;
          err.__augmented = true;
        }
        return callback.apply(this, results);
      };
    }
    return method.apply(this, args);
  };
}

module.exports = { extendTrace };
