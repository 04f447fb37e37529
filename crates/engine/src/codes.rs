//! Names of SQLite's result codes, primary and extended, as SQLite's header
//! spells them, for the `sqliteCode` field of errors.

/// (code, name), sorted by code.
const RESULT_CODES: &[(i32, &str)] = &[
    (0, "SQLITE_OK"),
    (1, "SQLITE_ERROR"),
    (2, "SQLITE_INTERNAL"),
    (3, "SQLITE_PERM"),
    (4, "SQLITE_ABORT"),
    (5, "SQLITE_BUSY"),
    (6, "SQLITE_LOCKED"),
    (7, "SQLITE_NOMEM"),
    (8, "SQLITE_READONLY"),
    (9, "SQLITE_INTERRUPT"),
    (10, "SQLITE_IOERR"),
    (11, "SQLITE_CORRUPT"),
    (12, "SQLITE_NOTFOUND"),
    (13, "SQLITE_FULL"),
    (14, "SQLITE_CANTOPEN"),
    (15, "SQLITE_PROTOCOL"),
    (16, "SQLITE_EMPTY"),
    (17, "SQLITE_SCHEMA"),
    (18, "SQLITE_TOOBIG"),
    (19, "SQLITE_CONSTRAINT"),
    (20, "SQLITE_MISMATCH"),
    (21, "SQLITE_MISUSE"),
    (22, "SQLITE_NOLFS"),
    (23, "SQLITE_AUTH"),
    (24, "SQLITE_FORMAT"),
    (25, "SQLITE_RANGE"),
    (26, "SQLITE_NOTADB"),
    (27, "SQLITE_NOTICE"),
    (28, "SQLITE_WARNING"),
    (100, "SQLITE_ROW"),
    (101, "SQLITE_DONE"),
    (256, "SQLITE_OK_LOAD_PERMANENTLY"),
    (257, "SQLITE_ERROR_MISSING_COLLSEQ"),
    (264, "SQLITE_READONLY_RECOVERY"),
    (266, "SQLITE_IOERR_READ"),
    (267, "SQLITE_CORRUPT_VTAB"),
    (270, "SQLITE_CANTOPEN_NOTEMPDIR"),
    (275, "SQLITE_CONSTRAINT_CHECK"),
    (279, "SQLITE_AUTH_USER"),
    (283, "SQLITE_NOTICE_RECOVER_WAL"),
    (284, "SQLITE_WARNING_AUTOINDEX"),
    (512, "SQLITE_OK_SYMLINK"),
    (513, "SQLITE_ERROR_RETRY"),
    (516, "SQLITE_ABORT_ROLLBACK"),
    (520, "SQLITE_READONLY_CANTLOCK"),
    (522, "SQLITE_IOERR_SHORT_READ"),
    (523, "SQLITE_CORRUPT_SEQUENCE"),
    (526, "SQLITE_CANTOPEN_ISDIR"),
    (531, "SQLITE_CONSTRAINT_COMMITHOOK"),
    (539, "SQLITE_NOTICE_RECOVER_ROLLBACK"),
    (769, "SQLITE_ERROR_SNAPSHOT"),
    (776, "SQLITE_READONLY_ROLLBACK"),
    (778, "SQLITE_IOERR_WRITE"),
    (779, "SQLITE_CORRUPT_INDEX"),
    (782, "SQLITE_CANTOPEN_FULLPATH"),
    (787, "SQLITE_CONSTRAINT_FOREIGNKEY"),
    (795, "SQLITE_NOTICE_RBU"),
    (1025, "SQLITE_ERROR_RESERVESIZE"),
    (1032, "SQLITE_READONLY_DBMOVED"),
    (1034, "SQLITE_IOERR_FSYNC"),
    (1038, "SQLITE_CANTOPEN_CONVPATH"),
    (1043, "SQLITE_CONSTRAINT_FUNCTION"),
    (1281, "SQLITE_ERROR_KEY"),
    (1288, "SQLITE_READONLY_CANTINIT"),
    (1290, "SQLITE_IOERR_DIR_FSYNC"),
    (1294, "SQLITE_CANTOPEN_DIRTYWAL"),
    (1299, "SQLITE_CONSTRAINT_NOTNULL"),
    (1537, "SQLITE_ERROR_UNABLE"),
    (1544, "SQLITE_READONLY_DIRECTORY"),
    (1546, "SQLITE_IOERR_TRUNCATE"),
    (1550, "SQLITE_CANTOPEN_SYMLINK"),
    (1555, "SQLITE_CONSTRAINT_PRIMARYKEY"),
    (1802, "SQLITE_IOERR_FSTAT"),
    (1811, "SQLITE_CONSTRAINT_TRIGGER"),
    (2058, "SQLITE_IOERR_UNLOCK"),
    (2067, "SQLITE_CONSTRAINT_UNIQUE"),
    (2314, "SQLITE_IOERR_RDLOCK"),
    (2323, "SQLITE_CONSTRAINT_VTAB"),
    (2570, "SQLITE_IOERR_DELETE"),
    (2826, "SQLITE_IOERR_BLOCKED"),
    (3082, "SQLITE_IOERR_NOMEM"),
    (3338, "SQLITE_IOERR_ACCESS"),
    (3594, "SQLITE_IOERR_CHECKRESERVEDLOCK"),
    (3850, "SQLITE_IOERR_LOCK"),
    (4106, "SQLITE_IOERR_CLOSE"),
    (4362, "SQLITE_IOERR_DIR_CLOSE"),
    (4618, "SQLITE_IOERR_SHMOPEN"),
    (4874, "SQLITE_IOERR_SHMSIZE"),
    (5130, "SQLITE_IOERR_SHMLOCK"),
    (5386, "SQLITE_IOERR_SHMMAP"),
    (5642, "SQLITE_IOERR_SEEK"),
    (5898, "SQLITE_IOERR_DELETE_NOENT"),
    (6154, "SQLITE_IOERR_MMAP"),
    (6410, "SQLITE_IOERR_GETTEMPPATH"),
    (6666, "SQLITE_IOERR_CONVPATH"),
    (6922, "SQLITE_IOERR_VNODE"),
    (7178, "SQLITE_IOERR_AUTH"),
    (7434, "SQLITE_IOERR_BEGIN_ATOMIC"),
    (7690, "SQLITE_IOERR_COMMIT_ATOMIC"),
    (7946, "SQLITE_IOERR_ROLLBACK_ATOMIC"),
    (8202, "SQLITE_IOERR_DATA"),
    (8458, "SQLITE_IOERR_CORRUPTFS"),
    (8714, "SQLITE_IOERR_IN_PAGE"),
    (8970, "SQLITE_IOERR_BADKEY"),
    (9226, "SQLITE_IOERR_CODEC"),
];

/// `SQLITE_CONSTRAINT_UNIQUE` for 2067. An extended code this table does
/// not know falls back to its primary code's name.
pub fn result_code_name(code: i32) -> &'static str {
    let find = |c: i32| {
        RESULT_CODES
            .binary_search_by_key(&c, |(k, _)| *k)
            .ok()
            .map(|i| RESULT_CODES[i].1)
    };
    find(code)
        .or_else(|| find(code & 0xff))
        .unwrap_or("SQLITE_ERROR")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_primary_and_extended_codes() {
        assert_eq!(result_code_name(0), "SQLITE_OK");
        assert_eq!(result_code_name(5), "SQLITE_BUSY");
        assert_eq!(result_code_name(2067), "SQLITE_CONSTRAINT_UNIQUE");
        assert_eq!(result_code_name(1555), "SQLITE_CONSTRAINT_PRIMARYKEY");
        assert_eq!(result_code_name(787), "SQLITE_CONSTRAINT_FOREIGNKEY");
        assert_eq!(result_code_name(0x7f00 | 19), "SQLITE_CONSTRAINT");
    }

    #[test]
    fn table_is_sorted_for_binary_search() {
        assert!(RESULT_CODES.windows(2).all(|w| w[0].0 < w[1].0));
    }
}
