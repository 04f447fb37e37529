// Types of offloop-sqlite3: offloop/sqlite3's.

import sqlite3 = require('offloop/sqlite3');
export = sqlite3;
