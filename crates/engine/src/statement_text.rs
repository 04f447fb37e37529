//! Where the first statement of a SQL text ends, as `sqlite3_prepare` sees
//! it: the text a prepared statement reports as its own (`sqlite3_sql`),
//! which `node:sqlite` gives as `sourceSQL`. It only reads text with
//! SQLite's tokenizer (`sqlite3_complete`); it never needs a connection.

use std::ffi::CString;

use rusqlite::ffi;

/// The first statement of `text` up to and including the semicolon that
/// ends it, or the whole text when no semicolon ends one. Leading empty
/// statements (`;` alone) belong to the statement after them, as in
/// `sqlite3_prepare`, which skips them.
pub fn first_statement(text: &str) -> &str {
    for (end, _) in text.match_indices(';') {
        let prefix = &text[..=end];
        if prefix.chars().all(|c| c == ';' || c.is_whitespace()) {
            continue;
        }
        if is_complete(prefix) {
            return prefix;
        }
    }
    text
}

/// Whether `sql` ends with a complete statement: its last semicolon is not
/// inside a string, an identifier, a comment or a trigger's body.
fn is_complete(sql: &str) -> bool {
    // A NUL ends the text for SQLite: no statement ends after it.
    let Ok(sql) = CString::new(sql) else {
        return false;
    };
    // SAFETY: `sql` is a NUL-terminated buffer that lives across the call;
    // sqlite3_complete only reads it and needs no connection.
    unsafe { ffi::sqlite3_complete(sql.as_ptr()) == 1 }
}

#[cfg(test)]
mod tests {
    use super::first_statement;

    #[test]
    fn the_first_statement_ends_at_its_own_semicolon() {
        assert_eq!(first_statement("  select 1; select 2"), "  select 1;");
        assert_eq!(first_statement("select ';' ; select 2"), "select ';' ;");
        assert_eq!(
            first_statement("select 1 -- ; c\n; select 2"),
            "select 1 -- ; c\n;"
        );
        assert_eq!(first_statement("select 1 /* ; */; x"), "select 1 /* ; */;");
        assert_eq!(
            first_statement("select [a;b] from (select 1 as [a;b]); x"),
            "select [a;b] from (select 1 as [a;b]);"
        );
        assert_eq!(first_statement("select 1 ;;"), "select 1 ;");
    }

    #[test]
    fn a_trigger_body_does_not_end_the_statement() {
        assert_eq!(
            first_statement(
                "create trigger tr after insert on t begin select 1; select 2; end; select 3"
            ),
            "create trigger tr after insert on t begin select 1; select 2; end;"
        );
    }

    #[test]
    fn a_text_without_an_ending_semicolon_is_one_statement() {
        assert_eq!(first_statement("select 1"), "select 1");
        assert_eq!(first_statement("select 1;   "), "select 1;");
        assert_eq!(first_statement(";select 1"), ";select 1");
        assert_eq!(first_statement(""), "");
    }
}
