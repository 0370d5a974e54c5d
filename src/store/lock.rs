//! One run writes a store at a time: `collect` and `replay` hold an exclusive lock on
//! `<store>.run-lock` (the operating system's advisory file lock, released when the process
//! ends, however it ends) for as long as they send. A second run started meanwhile — an
//! hourly collection that overlaps the previous one — is refused at once, before it sends
//! anything, with what holds the lock. Readers (`report`, `export`, `sqlite3`) never wait
//! for it: SQLite's WAL lets them read while a run writes. The file is removed when the
//! run ends normally; one left by a killed run is harmless (its lock died with it).

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::StoreError;

/// Held while a run writes; dropping it (or the process ending) releases the lock.
#[derive(Debug)]
pub struct RunLock {
    file: File,
    path: PathBuf,
}

impl Drop for RunLock {
    /// Removes the lock file while still holding its lock, so no other run can have locked
    /// it; a run that opened it just before takes the lock of an unlinked file and sees, in
    /// [`RunLock::acquire`], that the path no longer names it.
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
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
        // A lock taken on a file the previous holder removed meanwhile locks nothing:
        // open the path again (a few times at most; each retry means a run just ended).
        for _ in 0..8 {
            let file = Self::lock_file(db, &path)?;
            if still_at(&file, &path) {
                return Self::stamp(file, path, what);
            }
        }
        Err(StoreError::Lock {
            path,
            error: "the lock file kept being replaced while taking it".into(),
        })
    }

    /// Opens `path` and takes its lock, or says which run holds it.
    fn lock_file(db: &Path, path: &Path) -> Result<File, StoreError> {
        let io = |error: std::io::Error| StoreError::Lock {
            path: path.to_path_buf(),
            error: error.to_string(),
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
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
        Ok(file)
    }

    /// Writes who holds the lock into the locked file.
    fn stamp(mut file: File, path: PathBuf, what: &str) -> Result<RunLock, StoreError> {
        let io = |error: std::io::Error| StoreError::Lock {
            path: path.clone(),
            error: error.to_string(),
        };
        let line = format!(
            "{what}, pid {}, since {}\n",
            std::process::id(),
            super::now_rfc3339()
        );
        file.set_len(0).map_err(io)?;
        file.seek(SeekFrom::Start(0)).map_err(io)?;
        file.write_all(line.as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(RunLock { file, path })
    }
}

/// Whether `path` still names the file `file` has open (the same inode on Unix).
#[cfg(unix)]
fn still_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(open), Ok(named)) => open.dev() == named.dev() && open.ino() == named.ino(),
        _ => false,
    }
}

/// Elsewhere an open file cannot be removed, so the path always names it.
#[cfg(not(unix))]
fn still_at(_file: &File, _path: &Path) -> bool {
    true
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
        assert!(lock_path(&db).ends_with("t.db.run-lock"));
        drop(first);
        assert!(!lock_path(&db).exists(), "the lock file outlived its run");
        let second = RunLock::acquire(&db, "replay \"agents\"").unwrap();
        assert!(lock_path(&db).exists());
        drop(second);
        assert!(!lock_path(&db).exists());
    }
}
