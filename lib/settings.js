'use strict';

// Connection settings as the addon reports them: each connection's values
// read back on its own thread, and what differs from the request. Turns
// them into `db.settings()` objects and into warnings.

// Pragma names to `db.settings()` keys (the option names).
const KEYS = {
  __proto__: null,
  busy_timeout: 'busyTimeout',
  journal_mode: 'journalMode',
  synchronous: 'synchronous',
  journal_size_limit: 'journalSizeLimit',
  foreign_keys: 'foreignKeys',
  mmap_size: 'mmapSize',
  cache_size: 'cacheSize',
  temp_store: 'tempStore',
};

function roleName(role, index) {
  return role === 'reader' ? `reader ${index}` : role;
}

/**
 * The addon's report (one `[role, index, values, pragmas, mismatches]`
 * array per connection, see src/node/settings.rs) as
 * `[{ role, index, values, pragmas, mismatches }]`.
 */
function decodeReport(report) {
  return report.map(([role, index, values, pragmas, mismatches]) => {
    const settings = {};
    for (let i = 0; i < values.length; i += 2) settings[KEYS[values[i]] ?? values[i]] = values[i + 1];
    const extra = {};
    for (let i = 0; i < pragmas.length; i += 2) extra[pragmas[i]] = pragmas[i + 1];
    settings.pragmas = extra;
    const differ = [];
    for (let i = 0; i < mismatches.length; i += 3) {
      differ.push({ name: mismatches[i], requested: mismatches[i + 1], effective: mismatches[i + 2] });
    }
    return { role, index, settings, mismatches: differ };
  });
}

/** `db.settings()`: `{ writer, readers: [...], checkpointer }`. */
function decodeSettings(report) {
  const out = { writer: null, readers: [], checkpointer: null };
  for (const c of decodeReport(report)) {
    if (c.role === 'reader') out.readers[c.index] = c.settings;
    else out[c.role] = c.settings;
  }
  return out;
}

function show(value) {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

function hint(name, requested, effective) {
  if (name === 'mmap_size') {
    if (effective === null) return 'an in-memory database has no file to map';
    if (effective < requested) {
      return 'SQLite clamps mmap_size to SQLITE_MAX_MMAP_SIZE, see Database.compileOptions()';
    }
  }
  if (name === 'journal_mode') {
    return "an in-memory database keeps 'memory' or 'off', a read-only one keeps its mode, and WAL needs shared memory the file system supports";
  }
  if (effective === null) return 'SQLite reads no value back: an unknown pragma, or one without a value on this database';
  return null;
}

/**
 * One warning per setting whose value in force differs from the request,
 * listing the connections it differs on. Code: `OFFLOOP_SETTING_<NAME>`.
 */
function settingWarnings(report) {
  const groups = new Map();
  for (const c of decodeReport(report)) {
    for (const m of c.mismatches) {
      const key = `${m.name}\0${show(m.requested)}\0${show(m.effective)}`;
      let group = groups.get(key);
      if (group === undefined) {
        group = { ...m, connections: [] };
        groups.set(key, group);
      }
      group.connections.push(roleName(c.role, c.index));
    }
  }
  const warnings = [];
  for (const g of groups.values()) {
    const why = hint(g.name, g.requested, g.effective);
    const warning = new Error(
      `${g.name} = ${show(g.requested)} was requested, but ${show(g.effective)} is in force on ` +
        `${g.connections.join(', ')}${why === null ? '' : ` (${why})`}`,
    );
    warning.name = 'OffloopSettingWarning';
    warning.code = `OFFLOOP_SETTING_${g.name.toUpperCase()}`;
    warning.setting = g.name;
    warning.requested = g.requested;
    warning.effective = g.effective;
    warning.connections = g.connections;
    warnings.push(warning);
  }
  return warnings;
}

function emitSettingWarnings(report) {
  if (!Array.isArray(report)) return;
  for (const warning of settingWarnings(report)) process.emitWarning(warning);
}

module.exports = { decodeSettings, emitSettingWarnings };
