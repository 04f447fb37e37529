'use strict';

// db.function() and db.aggregate(): argument checks in node:sqlite's order
// and with its messages, then the definition goes to the addon, which puts
// it on every connection (src/node/functions.rs). This file never calls a
// user function itself: SQLite does, from its own threads, through the
// addon.

const { native } = require('./calls.js');
const { argType, errorFromNative } = require('./errors.js');

function readBoolean(options, name) {
  const value = options[name];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw argType(`options.${name}`, 'a boolean');
  return value;
}

/** Throws what the addon refused (null: the definition was accepted). */
function check(refused) {
  if (refused !== null) throw errorFromNative(refused);
}

/** `db.function(name[, options], fn)`, arguments as the caller gave them. */
function defineFunction(nativeDb, args) {
  const [name] = args;
  if (typeof name !== 'string') throw argType('name', 'a string');
  let options = {};
  let fn = args[1];
  if (args.length > 2) {
    options = args[1];
    fn = args[2];
    // A function is an object too, as node:sqlite sees it.
    if (options === null || (typeof options !== 'object' && typeof options !== 'function')) {
      throw argType('options', 'an object');
    }
  }
  const useBigIntArguments = readBoolean(options, 'useBigIntArguments');
  const varargs = readBoolean(options, 'varargs');
  const deterministic = readBoolean(options, 'deterministic');
  const directOnly = readBoolean(options, 'directOnly');
  if (typeof fn !== 'function') throw argType('function', 'a function');
  const arity = varargs ? -1 : fn.length;
  check(native.defineFunction(nativeDb, name, arity, deterministic, directOnly, useBigIntArguments, fn));
}

/** `db.aggregate(name, options)`. */
function defineAggregate(nativeDb, name, options) {
  // node:sqlite reads `options.start` first, whatever `options` is, and
  // takes any value but undefined (an object is shared by every group; a
  // function is called for each).
  const start = options.start;
  if (start === undefined) throw argType('options.start', 'a function or a primitive value');
  const startIsFunction = typeof start === 'function';
  const { step, inverse, result } = options;
  if (typeof step !== 'function') throw argType('options.step', 'a function');
  const useBigIntArguments = readBoolean(options, 'useBigIntArguments');
  const varargs = readBoolean(options, 'varargs');
  const directOnly = readBoolean(options, 'directOnly');
  // node:sqlite takes `deterministic` as set only when it is `true`.
  const deterministic = options.deterministic === true;
  if (inverse !== undefined && typeof inverse !== 'function') throw argType('options.inverse', 'a function');
  const arity = varargs ? -1 : Math.max(0, step.length - 1, (inverse?.length ?? 0) - 1);
  check(
    native.defineAggregate(
      nativeDb,
      String(name),
      arity,
      deterministic,
      directOnly,
      useBigIntArguments,
      start,
      startIsFunction,
      step,
      inverse,
      result,
    ),
  );
}

module.exports = { defineFunction, defineAggregate };
