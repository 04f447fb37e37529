'use strict';

// db.setAuthorizer(): node:sqlite's checks of the callback and of its
// answers. This file owns turning the caller's callback into one that
// answers only SQLITE_OK, SQLITE_DENY or SQLITE_IGNORE, or throws what
// node:sqlite throws for anything else; the addon puts it after offloop's
// own authorizer on every connection (src/node/changes.rs). It never
// touches SQLite.

const { argType } = require('./errors.js');
const { constants } = require('./constants.js');

const ANSWERS = new Set([constants.SQLITE_OK, constants.SQLITE_DENY, constants.SQLITE_IGNORE]);

/** The callback the addon calls, or null; throws on a bad `callback`. */
function readAuthorizer(callback) {
  if (callback === null) return null;
  if (typeof callback !== 'function') throw argType('callback', 'a function or null');
  return (action, arg1, arg2, dbName, trigger) => {
    const answer = callback(action, arg1, arg2, dbName, trigger);
    if (!Number.isInteger(answer)) {
      throw new TypeError('Authorizer callback must return an integer authorization code');
    }
    if (!ANSWERS.has(answer)) throw new RangeError('Authorizer callback returned a invalid authorization code');
    return answer;
  };
}

module.exports = { readAuthorizer };
