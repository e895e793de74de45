//! Schema versions of ascendopt's SQLite files (the run store and the
//! experience bank), in one place: `PRAGMA user_version` holds the
//! version; a fresh file is created at the newest version; an older one is
//! upgraded step by step, all in one immediate transaction; a newer one,
//! or a file with tables but no version (not ours), is refused and left
//! untouched.
//!
//! Invariant: a file is either at the caller's newest version after
//! [`migrate`] or unchanged (the transaction commits only at the end).

use rusqlite::{Connection, Transaction, TransactionBehavior};

/// Why a file's schema cannot be brought to the newest version.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// A newer build wrote it.
    #[error("schema version {found} is newer than this build's {supported}")]
    Newer {
        /// Its version.
        found: i64,
        /// This build's.
        supported: i64,
    },
    /// Tables but no version: some other program's file.
    #[error("the file has tables but no schema version: not an ascendopt file")]
    Foreign,
    /// SQLite failed.
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
}

/// The file's `user_version`.
pub fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Refuses a file a newer build wrote, before anything writes to it (a
/// journal-mode switch writes the header).
pub fn refuse_newer(conn: &Connection, end_version: i64) -> Result<(), MigrateError> {
    let found = version(conn)?;
    if found > end_version {
        return Err(MigrateError::Newer {
            found,
            supported: end_version,
        });
    }
    Ok(())
}

/// Brings the file to `end_version`: `init` creates a fresh schema (at
/// `end_version`), `upgrade_from(tx, v)` takes version `v` to `v + 1`.
pub fn migrate(
    conn: &Connection,
    end_version: i64,
    init: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<()>,
    mut upgrade_from: impl FnMut(&Transaction<'_>, i64) -> rusqlite::Result<()>,
) -> Result<(), MigrateError> {
    let tx = Transaction::new_unchecked(conn, TransactionBehavior::Immediate)?;
    let found: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if found == end_version {
        return Ok(());
    }
    if found > end_version {
        // Another process upgraded it between the caller's check and the
        // lock.
        return Err(MigrateError::Newer {
            found,
            supported: end_version,
        });
    }
    if found == 0 {
        let tables: i64 = tx.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )?;
        if tables > 0 {
            return Err(MigrateError::Foreign);
        }
        init(&tx)?;
    } else {
        for v in found..end_version {
            upgrade_from(&tx, v)?;
        }
    }
    tx.pragma_update(None, "user_version", end_version)?;
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init(tx: &Transaction<'_>) -> rusqlite::Result<()> {
        tx.execute_batch("CREATE TABLE t (a INTEGER, b INTEGER NOT NULL DEFAULT 0);")
    }

    fn upgrade(tx: &Transaction<'_>, v: i64) -> rusqlite::Result<()> {
        match v {
            1 => tx.execute_batch("ALTER TABLE t ADD COLUMN b INTEGER NOT NULL DEFAULT 0;"),
            _ => Ok(()),
        }
    }

    #[test]
    fn fresh_files_are_created_old_ones_upgraded_newer_and_foreign_ones_refused() {
        let dir = tempfile::tempdir().unwrap();
        let fresh = Connection::open(dir.path().join("fresh.sqlite")).unwrap();
        migrate(&fresh, 2, init, upgrade).unwrap();
        assert_eq!(version(&fresh).unwrap(), 2);
        // Again: nothing to do.
        migrate(&fresh, 2, init, |_, _| panic!("no upgrade")).unwrap();

        let old = Connection::open(dir.path().join("old.sqlite")).unwrap();
        old.execute_batch(
            "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (7); PRAGMA user_version = 1;",
        )
        .unwrap();
        migrate(&old, 2, |_| panic!("not fresh"), upgrade).unwrap();
        assert_eq!(version(&old).unwrap(), 2);
        let (a, b): (i64, i64) = old
            .query_row("SELECT a, b FROM t", [], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap();
        assert_eq!((a, b), (7, 0), "rows kept, column added");

        let newer = Connection::open(dir.path().join("newer.sqlite")).unwrap();
        newer.execute_batch("PRAGMA user_version = 9;").unwrap();
        assert!(matches!(
            refuse_newer(&newer, 2),
            Err(MigrateError::Newer {
                found: 9,
                supported: 2
            })
        ));
        assert!(matches!(
            migrate(&newer, 2, init, upgrade),
            Err(MigrateError::Newer { .. })
        ));
        assert_eq!(version(&newer).unwrap(), 9, "left untouched");

        let foreign = Connection::open(dir.path().join("foreign.sqlite")).unwrap();
        foreign.execute_batch("CREATE TABLE other (x);").unwrap();
        assert!(matches!(
            migrate(&foreign, 2, init, upgrade),
            Err(MigrateError::Foreign)
        ));
        assert_eq!(version(&foreign).unwrap(), 0);
    }

    #[test]
    fn a_failing_upgrade_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("f.sqlite")).unwrap();
        conn.execute_batch("CREATE TABLE t (a INTEGER); PRAGMA user_version = 1;")
            .unwrap();
        let err = migrate(&conn, 3, init, |tx, v| {
            tx.execute_batch(&format!("ALTER TABLE t ADD COLUMN c{v} INTEGER;"))?;
            if v == 2 {
                tx.execute_batch("SELECT * FROM missing_table;")?;
            }
            Ok(())
        })
        .unwrap_err();
        assert!(matches!(err, MigrateError::Sql(_)), "{err}");
        assert_eq!(version(&conn).unwrap(), 1);
        let cols: i64 = conn
            .query_row("SELECT count(*) FROM pragma_table_info('t')", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(cols, 1, "the first step rolled back too");
    }
}
