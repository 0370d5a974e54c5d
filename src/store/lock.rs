//! One run writes a store at a time: `collect` and `replay` hold an exclusive lock on
//! `<store>.run-lock` (the operating system's advisory file lock, released when the process
//! ends, however it ends) for as long as they send. A second run started meanwhile — an
//! hourly collection that overlaps the previous one — is refused at once, before it sends
//! anything, with what holds the lock. Readers (`report`, `export`, `sqlite3`) never wait
//! for it: SQLite's WAL lets them read while a run writes.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::StoreError;

/// Held while a run writes; dropping it (or the process ending) releases the lock.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

/// The lock file beside a store.
pub fn lock_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".run-lock");
    PathBuf::from(name)
}

impl RunLock {
    /// Takes the store's run lock, or says which run holds it. `what` names this run in the
    /// lock file (`collect "hourly"`), for the message another run would print.
    pub fn acquire(db: &Path, what: &str) -> Result<RunLock, StoreError> {
        let path = lock_path(db);
        let io = |error: std::io::Error| StoreError::Lock {
            path: path.clone(),
            error: error.to_string(),
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                // What the holder wrote; a lock file we cannot read still refuses.
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                return Err(StoreError::Busy {
                    path: db.to_path_buf(),
                    holder: if holder.is_empty() {
                        "another run".into()
                    } else {
                        holder.chars().take(200).collect()
                    },
                });
            }
            Err(TryLockError::Error(e)) => return Err(io(e)),
        }
        let line = format!(
            "{what}, pid {}, since {}\n",
            std::process::id(),
            super::now_rfc3339()
        );
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(line.as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(RunLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("t.db");
        let first = RunLock::acquire(&db, "collect \"hourly\"").unwrap();
        let err = RunLock::acquire(&db, "collect \"hourly\"")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("another run is writing to this store"),
            "{err}"
        );
        assert!(err.contains("collect \"hourly\", pid "), "{err}");
        assert!(err.contains("fix: "), "{err}");
        drop(first);
        RunLock::acquire(&db, "replay \"agents\"").unwrap();
        assert!(lock_path(&db).ends_with("t.db.run-lock"));
    }
}
