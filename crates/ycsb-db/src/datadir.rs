//! The one guard of an embedded engine's data directory.
//!
//! Every embedded store opens its directory through [`DataDir::open`]
//! before the engine touches it. The guard
//!
//! - holds an exclusive lock on the directory itself for as long as the
//!   store is open, so that a second `ycsb` (or a second store in this
//!   process) on the same directory is refused, whatever its options;
//! - recognises the engine's files by their content (magic numbers,
//!   headers), as the engine's [`DirLayout`] declares them, and refuses a
//!   directory holding anything else: a text file named `data.mdb`,
//!   someone's `notes.txt`, another engine's database;
//! - refuses a database whose engine lock another process holds (an engine
//!   tool, a program that is not `ycsb`);
//! - and only then, when asked to start empty, removes the files the engine
//!   owns, and nothing else.
//!
//! A refusal changes nothing: no file is created, written or removed (a
//! directory the guard created for the check is removed again).

use std::fs::File;
use std::io::Read;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

use crate::{Properties, Property, PropertyError, StoreError};

/// Where an embedded store keeps its files, as its properties set it: the
/// directory property (`lmdb.dbpath`, `fjall.dir` ...), where it was set,
/// and the store's `<store>.destroy`. Every embedded store reads it the
/// same way, opens its directory through it ([`DirSetting::open`]) and
/// names it the same way in its errors ([`DirSetting::open_error`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirSetting {
    /// The directory.
    pub path: PathBuf,
    /// Whether the engine's files are removed before the store opens.
    pub destroy: bool,
    property: &'static str,
    origin: String,
}

impl DirSetting {
    /// Reads the directory property `dir` (required) and `destroy`.
    ///
    /// # Errors
    ///
    /// A [`PropertyError`] naming the property when `dir` is missing or
    /// `destroy` is not a boolean.
    pub fn from_properties(
        properties: &Properties,
        dir: &Property<PathBuf>,
        destroy: &Property<bool>,
    ) -> Result<DirSetting, PropertyError> {
        Ok(DirSetting {
            path: properties.require(dir)?,
            destroy: properties.get(destroy)?,
            property: dir.name(),
            origin: properties
                .raw(dir.decl())
                .map(|r| r.origin.to_string())
                .unwrap_or_default(),
        })
    }

    /// The directory `path`, the value of the property `property` set at
    /// `origin` (`-p flag`, `file:line`), and whether the engine's files
    /// are removed before the store opens: for a store that reads its
    /// directory property itself.
    pub fn new(
        property: &'static str,
        path: impl Into<PathBuf>,
        origin: impl Into<String>,
        destroy: bool,
    ) -> DirSetting {
        DirSetting {
            path: path.into(),
            destroy,
            property,
            origin: origin.into(),
        }
    }

    /// Where the directory property was set (`-p flag`, `file:line`).
    pub fn origin(&self) -> &str {
        &self.origin
    }

    /// Opens the directory through the guard ([`DataDir::open`]) for the
    /// store `store`, whose engine keeps `layout`.
    ///
    /// # Errors
    ///
    /// As [`DataDir::open`].
    pub fn open(
        &self,
        store: &'static str,
        layout: &DirLayout,
    ) -> Result<DataDir, Box<DataDirError>> {
        DataDir::open(store, layout, self)
    }

    /// Opens the directory through the guard ([`DirSetting::open`]), then
    /// the engine in it: `open` is given the directory and answers the
    /// engine or the engine's message, which becomes the store's open error
    /// naming the directory ([`DirSetting::open_error`]). The engine comes
    /// back held with the guard ([`EngineInDir`]), which keeps the
    /// directory locked until the engine has closed.
    ///
    /// # Errors
    ///
    /// [`StoreError::DataDir`] when the guard refuses the directory or
    /// cannot prepare it (nothing is changed then); [`StoreError::Open`]
    /// with the engine's message when `open` fails.
    pub fn open_engine<E>(
        &self,
        store: &'static str,
        layout: &DirLayout,
        open: impl FnOnce(&Path) -> Result<E, String>,
    ) -> Result<EngineInDir<E>, StoreError> {
        let dir = self.open(store, layout)?;
        let engine = open(&self.path).map_err(|message| self.open_error(store, message))?;
        Ok(EngineInDir::new(engine, dir))
    }

    /// Opens a database kept in the one file the property names, through
    /// the guard ([`DataDir::open_file`]).
    ///
    /// # Errors
    ///
    /// As [`DataDir::open_file`].
    pub fn open_file(
        &self,
        store: &'static str,
        layout: &DirLayout,
    ) -> Result<DataDir, Box<DataDirError>> {
        DataDir::open_file(store, layout, self)
    }

    /// The store's "cannot open" error with the engine's `message`, naming
    /// the directory as `property=path (origin)`.
    pub fn open_error(&self, store: &str, message: impl std::fmt::Display) -> StoreError {
        StoreError::Open {
            store: store.to_string(),
            message: format!(
                "{}={} ({}): {message}",
                self.property,
                self.path.display(),
                self.origin
            ),
        }
    }
}

/// How many bytes of a file its content check sees.
const SAMPLE_BYTES: usize = 4096;

/// What a file's content must show for the file to be the engine's.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Content {
    /// The file starts with these bytes.
    Prefix(&'static [u8]),
    /// These bytes at this offset.
    At(usize, &'static [u8]),
    /// A check of the file's first bytes (up to 4 KiB; fewer when the
    /// file is shorter).
    Check(fn(&[u8]) -> bool),
    /// An empty file (LevelDB's and RocksDB's `LOCK`): anything in it is
    /// not the engine's.
    Empty,
    /// Not checked: files an engine may leave half written with nothing
    /// recognisable in them (a table whose footer was never written, a
    /// log). Such a file is accepted only beside a recognised marker, so
    /// the guard never removes one from a directory it has not recognised
    /// by content.
    Unchecked,
    /// A directory the engine keeps, all of whose contents are the
    /// engine's; accepted only beside a recognised marker, as
    /// [`Unchecked`](Self::Unchecked).
    Tree,
}

impl Content {
    fn accepts(&self, sample: &[u8]) -> bool {
        match *self {
            Content::Prefix(bytes) => sample.starts_with(bytes),
            Content::At(offset, bytes) => sample
                .get(offset..offset + bytes.len())
                .is_some_and(|s| s == bytes),
            Content::Check(check) => check(sample),
            Content::Empty => sample.is_empty(),
            Content::Unchecked | Content::Tree => true,
        }
    }

    /// Whether the content proves nothing by itself.
    const fn is_unchecked(&self) -> bool {
        matches!(self, Content::Unchecked | Content::Tree)
    }
}

/// How the names of an engine's files look.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub enum Name {
    /// Exactly this name.
    Exact(&'static str),
    /// This prefix and anything after it (`MANIFEST-000005`).
    Prefix(&'static str),
    /// This prefix, one or more decimal digits, then this suffix
    /// (`000005.sst`, `WiredTigerLog.0000000001`).
    Numbered(&'static str, &'static str),
}

impl Name {
    pub(crate) fn matches(&self, name: &str) -> bool {
        match *self {
            Name::Exact(exact) => name == exact,
            Name::Prefix(prefix) => name.len() > prefix.len() && name.starts_with(prefix),
            Name::Numbered(prefix, suffix) => name
                .strip_prefix(prefix)
                .and_then(|rest| rest.strip_suffix(suffix))
                .is_some_and(|digits| {
                    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
                }),
        }
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Name::Exact(name) => f.write_str(name),
            Name::Prefix(prefix) => write!(f, "{prefix}*"),
            Name::Numbered(prefix, suffix) => write!(f, "{prefix}<n>{suffix}"),
        }
    }
}

/// One kind of file (or directory) an engine keeps in its data directory.
#[derive(Clone, Copy, Debug)]
pub struct EngineFile {
    pub(crate) name: Name,
    content: Content,
    marker: bool,
}

impl EngineFile {
    /// A file whose presence, with this content, makes the directory the
    /// engine's database (LMDB's `data.mdb`, RocksDB's `IDENTITY`).
    /// `content` must be a real check, not [`Content::Unchecked`].
    pub const fn marker(name: Name, content: Content) -> Self {
        Self {
            name,
            content,
            marker: true,
        }
    }

    /// Another file the engine keeps. With a checked content it may be
    /// there without a marker (a database being created); unchecked, only
    /// beside one.
    pub const fn owned(name: Name, content: Content) -> Self {
        Self {
            name,
            content,
            marker: false,
        }
    }
}

/// Whether a file starts as a line of the info LOG of LevelDB (and of
/// RocksDB, which kept its format) does: a `YYYY/MM/DD-` date.
pub fn is_dated_log(start: &[u8]) -> bool {
    let pattern = b"dddd/dd/dd-";
    start.len() >= pattern.len()
        && pattern.iter().zip(start).all(|(p, b)| {
            if *p == b'd' {
                b.is_ascii_digit()
            } else {
                p == b
            }
        })
}

/// Whether a file starts with the header of a record of LevelDB's log
/// format (MANIFESTs and write-ahead logs, RocksDB's too): a checksum, a
/// length, then a record type from 1 to `max_type` (4 for LevelDB; RocksDB's
/// recyclable records go to 8).
pub fn is_log_record(start: &[u8], max_type: u8) -> bool {
    start.get(6).is_some_and(|t| (1..=max_type).contains(t))
}

/// How another process that has the database open holds the engine's own
/// lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LockKind {
    /// A POSIX record lock (`fcntl`), as LevelDB, RocksDB, LMDB, SQLite and
    /// WiredTiger take.
    Record,
    /// A whole-file `flock`, as fjall and redb take.
    Flock,
}

/// A file whose lock the engine holds while a process has the database
/// open.
#[derive(Clone, Copy, Debug)]
pub struct EngineLock {
    /// The file's name in the data directory.
    pub file: &'static str,
    /// How the engine locks it.
    pub kind: LockKind,
}

/// What an embedded engine keeps in its data directory: the one
/// declaration the guard needs, on the store's descriptor
/// ([`StoreDescriptor::dir_layout`](crate::StoreDescriptor::dir_layout)).
#[derive(Clone, Copy, Debug)]
pub struct DirLayout {
    /// The engine's name in messages (`LMDB`).
    pub engine: &'static str,
    /// Every kind of file the engine keeps there.
    pub files: &'static [EngineFile],
    /// The engine's own lock files.
    pub locks: &'static [EngineLock],
}

impl DirLayout {
    /// The names of the files the engine keeps under one fixed name
    /// (`data.mdb`, `CURRENT`): what a test writes impostors under.
    pub fn fixed_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.files.iter().filter_map(|f| match f.name {
            Name::Exact(name) => Some(name),
            _ => None,
        })
    }

    /// For an engine that keeps a database in one file and companions named
    /// after it (SQLite's `-wal`, `-shm`, `-journal`): each file of the
    /// layout as it is named beside a database file called `base`, with
    /// the layout's name it stands for. `None` when the layout is not one
    /// marker file and companions named by a suffix to the marker's name.
    fn named_after(&self, base: &str) -> Option<Vec<(String, &'static str, &EngineFile)>> {
        let mut markers = self.files.iter().filter(|f| f.marker);
        let (Some(marker), None) = (markers.next(), markers.next()) else {
            return None;
        };
        let Name::Exact(marker_name) = marker.name else {
            return None;
        };
        self.files
            .iter()
            .map(|f| match f.name {
                Name::Exact(name) => name
                    .strip_prefix(marker_name)
                    .map(|suffix| (format!("{base}{suffix}"), name, f)),
                _ => None,
            })
            .collect()
    }

    fn file_named(&self, name: &str) -> Option<&EngineFile> {
        self.files.iter().find(|f| f.name.matches(name))
    }

    fn marker_names(&self) -> String {
        let names: Vec<String> = self
            .files
            .iter()
            .filter(|f| f.marker)
            .map(|f| f.name.to_string())
            .collect();
        names.join(" or ")
    }
}

/// Why the guard refused a directory. Nothing was changed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refusal {
    /// The path is a file (or something else that is not a directory).
    NotADirectory,
    /// The path of a database kept in one file is a directory.
    NotAFile,
    /// Another `ycsb` process (or another store in this one) has a
    /// database file of the same directory open: the guard of a database
    /// kept in one file locks the directory holding it.
    DirectoryInUse {
        /// The directory.
        dir: String,
    },
    /// Another `ycsb` process (or another store in this one) has the
    /// directory open.
    InUse,
    /// Another process holds the engine's own lock on a file.
    EngineLocked {
        /// The lock file.
        file: String,
        /// The holding process, when the kernel says.
        pid: Option<i32>,
    },
    /// A file has one of the engine's names but not its content.
    NotTheEngines {
        /// The file.
        file: String,
        /// What it starts with, for the message.
        starts_with: String,
    },
    /// A file or directory that is not the engine's.
    Foreign {
        /// Its name.
        file: String,
        /// What it looks like, when the guard recognises another
        /// engine's file.
        looks_like: Option<&'static str>,
        /// Whether the engine's database is there beside it.
        beside_database: bool,
    },
    /// A file the engine keeps only in a database, without the file that
    /// makes the directory one.
    NoMarker {
        /// The file found.
        file: String,
        /// The names of the files that would make it one.
        markers: String,
    },
}

/// An error of [`DataDir::open`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DataDirError {
    /// The directory is refused; nothing was changed.
    #[error(
        "{setting} {}; nothing was changed (use the store that made it, or another {property})",
        reason.describe(engine)
    )]
    Refused {
        /// The store's name.
        store: &'static str,
        /// The engine's name (`LMDB`).
        engine: &'static str,
        /// The property and its value and origin (`lmdb.dbpath=/d (-p)`).
        setting: String,
        /// The property alone.
        property: &'static str,
        /// Why.
        reason: Refusal,
    },
    /// The directory could not be created, read, locked or emptied.
    #[error("{setting}: cannot {doing}: {source}")]
    Io {
        /// The store's name.
        store: &'static str,
        /// The property and its value and origin.
        setting: String,
        /// What was being done.
        doing: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl DataDirError {
    /// The store whose directory it is.
    pub fn store(&self) -> &'static str {
        match self {
            DataDirError::Refused { store, .. } | DataDirError::Io { store, .. } => store,
        }
    }

    /// Why the directory was refused, if it was.
    pub fn refusal(&self) -> Option<&Refusal> {
        match self {
            DataDirError::Refused { reason, .. } => Some(reason),
            DataDirError::Io { .. } => None,
        }
    }
}

impl Refusal {
    /// The refusal in words, for a directory of `engine`.
    pub fn describe(&self, engine: &str) -> String {
        match self {
            Refusal::NotADirectory => "is not a directory".to_string(),
            Refusal::NotAFile => {
                "is a directory, not the database file".to_string()
            }
            Refusal::DirectoryInUse { dir } => format!(
                "is in {dir}, where another ycsb process (or another store in this one) has a database open: one database file of a directory is used at a time"
            ),
            Refusal::InUse => {
                "is in use: another ycsb process (or another store in this one) has it open"
                    .to_string()
            }
            Refusal::EngineLocked { file, pid } => {
                let pid = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
                format!("is open in another process{pid}, which holds the lock on its {file}")
            }
            Refusal::NotTheEngines { file, starts_with } => format!(
                "holds {file:?}, which has the name of a {engine} file but not its content (it starts with {starts_with})"
            ),
            Refusal::Foreign {
                file,
                looks_like,
                beside_database,
            } => {
                let what = match looks_like {
                    Some(what) => format!("holds {what} (its {file:?})"),
                    None if *beside_database => {
                        format!("holds {file:?} beside the {engine} database, and it is not {engine}'s")
                    }
                    None => format!(
                        "is not empty and holds no {engine} database (it holds {file:?})"
                    ),
                };
                if *beside_database {
                    format!("{what}: a data directory holds the engine's files alone")
                } else {
                    what
                }
            }
            Refusal::NoMarker { file, markers } => format!(
                "holds {file:?} but no {markers}: it is not a {engine} database"
            ),
        }
    }
}

/// An embedded engine's data directory, checked and locked for as long as
/// the value lives. A store keeps it with its engine handle in an
/// [`EngineInDir`], which drops it after the engine.
#[derive(Debug)]
pub struct DataDir {
    path: PathBuf,
    /// The directory, opened and `flock`ed: the lock goes with the file.
    lock: File,
}

/// What the guard found in a directory.
struct Survey {
    /// Entries that are the engine's, with whether each is a directory.
    owned: Vec<(String, bool)>,
    /// Whether a marker with the right content is there.
    marker: bool,
    /// The first entry accepted only beside a marker.
    needs_marker: Option<String>,
}

impl DataDir {
    /// Checks the directory `setting` names for the store `store` whose
    /// engine keeps `layout`, creates it if missing, locks it, and with the
    /// setting's `destroy` removes the engine's files from it.
    ///
    /// # Errors
    ///
    /// [`DataDirError::Refused`] when the path is not a directory, another
    /// process has the directory or the database open, or the directory
    /// holds anything that is not the engine's (nothing is changed then);
    /// [`DataDirError::Io`] when it cannot be created, read, locked or
    /// emptied.
    pub fn open(
        store: &'static str,
        layout: &DirLayout,
        setting: &DirSetting,
    ) -> Result<DataDir, Box<DataDirError>> {
        let (path, destroy) = (setting.path.as_path(), setting.destroy);
        let errors = Errors::new(store, layout, setting);
        let refuse = |reason: Refusal| errors.refuse(reason);
        let io = |doing: &str, source: std::io::Error| errors.io(doing, source);
        let created = match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => Vec::new(),
            Ok(_) => return Err(refuse(Refusal::NotADirectory)),
            // Missing, or below a file: creating it says which.
            Err(e)
                if e.kind() == std::io::ErrorKind::NotFound
                    || e.raw_os_error() == Some(libc::ENOTDIR) =>
            {
                create_dirs(path).map_err(|e| io("create the directory", e))?
            }
            Err(e) => return Err(io("read the directory", e)),
        };
        let checked = (|| {
            let lock = errors.lock(path, || Refusal::InUse)?;
            let survey = survey(layout, path).map_err(|e| match e {
                SurveyError::Refused(reason) => refuse(reason),
                SurveyError::Io(doing, source) => io(&doing, source),
            })?;
            for lock_file in layout.locks {
                if let Some(reason) = engine_lock_held(&path.join(lock_file.file), lock_file)
                    .map_err(|e| io(&format!("check the lock of {}", lock_file.file), e))?
                {
                    return Err(refuse(reason));
                }
            }
            if destroy {
                for (name, is_dir) in &survey.owned {
                    let entry = path.join(name);
                    let removed = if *is_dir {
                        std::fs::remove_dir_all(&entry)
                    } else {
                        std::fs::remove_file(&entry)
                    };
                    match removed {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(io(&format!("remove {name} to start empty"), e)),
                    }
                }
            }
            Ok(lock)
        })();
        DataDir::kept_or_undone(checked, path.to_path_buf(), &created)
    }

    /// Checks and locks a database kept in the one file `setting` names:
    /// YCSB-cpp's `sqlite.dbpath`. The
    /// directory holding it is shared with other files, so only the
    /// database file and its companions (the layout's files, named after
    /// it) are looked at, checked by content as in a data directory, and
    /// with `destroy` removed; everything else there is left alone. The
    /// lock is on that directory (a lock on the database file itself would
    /// be released with the engine's own record locks by the close of any
    /// descriptor of it in this process), so two databases of one
    /// directory are not open at once. Missing directories are created.
    ///
    /// # Errors
    ///
    /// [`DataDirError::Refused`] when the path is a directory, the
    /// directory is in use, the engine's lock is held by another process,
    /// or a file with one of the database's names is not the engine's
    /// (nothing is changed then); [`DataDirError::Io`] when the directory
    /// cannot be created, read or locked, a file cannot be removed, or the
    /// layout is not one file and its companions.
    pub fn open_file(
        store: &'static str,
        layout: &DirLayout,
        setting: &DirSetting,
    ) -> Result<DataDir, Box<DataDirError>> {
        let (path, destroy) = (setting.path.as_path(), setting.destroy);
        let errors = Errors::new(store, layout, setting);
        let refuse = |reason: Refusal| errors.refuse(reason);
        let io = |doing: &str, source: std::io::Error| errors.io(doing, source);
        let Some(base) = path.file_name().and_then(|n| n.to_str()) else {
            return Err(refuse(Refusal::NotAFile));
        };
        let names = layout.named_after(base).ok_or_else(|| {
            io(
                "keep the database in one file",
                std::io::Error::new(
                    std::io::ErrorKind::Unsupported,
                    format!(
                        "{} keeps more than one file and its companions",
                        layout.engine
                    ),
                ),
            )
        })?;
        if std::fs::metadata(path).is_ok_and(|meta| meta.is_dir()) {
            return Err(refuse(Refusal::NotAFile));
        }
        let (dir, created) = file_directory(path).map_err(|(doing, e)| io(doing, e))?;
        let checked = (|| {
            let lock = errors.lock(&dir, || Refusal::DirectoryInUse {
                dir: dir.display().to_string(),
            })?;
            let owned = survey_named(&dir, &names).map_err(|e| match e {
                SurveyError::Refused(reason) => refuse(reason),
                SurveyError::Io(doing, source) => io(&doing, source),
            })?;
            for lock_file in layout.locks {
                let Some((name, _, _)) = names.iter().find(|(_, n, _)| *n == lock_file.file) else {
                    continue;
                };
                if let Some(reason) = engine_lock_held(&dir.join(name), lock_file)
                    .map_err(|e| io(&format!("check the lock of {name}"), e))?
                {
                    // Named as the file is here, not as in a data directory.
                    let reason = match reason {
                        Refusal::EngineLocked { pid, .. } => Refusal::EngineLocked {
                            file: name.clone(),
                            pid,
                        },
                        other => other,
                    };
                    return Err(refuse(reason));
                }
            }
            if destroy {
                for name in &owned {
                    match std::fs::remove_file(dir.join(name)) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(io(&format!("remove {name} to start empty"), e)),
                    }
                }
            }
            Ok(lock)
        })();
        DataDir::kept_or_undone(checked, dir, &created)
    }

    /// The guard of `path` holding `lock` when the checks passed; when they
    /// failed, their error, and nothing left behind: the directories made
    /// for the check (`created`, outermost first) are removed again.
    fn kept_or_undone(
        checked: Result<File, Box<DataDirError>>,
        path: PathBuf,
        created: &[PathBuf],
    ) -> Result<DataDir, Box<DataDirError>> {
        match checked {
            Ok(lock) => Ok(DataDir { path, lock }),
            Err(e) => {
                for dir in created.iter().rev() {
                    let _ = std::fs::remove_dir(dir);
                }
                Err(e)
            }
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DataDir {
    /// Unlocks before the descriptor closes: a child process forked
    /// meanwhile (by another thread, before its exec closes its copy)
    /// shares the open file description, and with it the lock, which
    /// closing this descriptor alone would leave held.
    fn drop(&mut self) {
        let _ = self.lock.unlock();
    }
}

/// An embedded engine opened in its guarded directory
/// ([`DirSetting::open_engine`]): the engine handle and the directory's
/// guard in one value, which closes (drops) the engine before it releases
/// the guard, so that no other process or store can open the directory
/// while the engine may still write to it. A store keeps it as its engine
/// handle; it derefs to the engine.
pub struct EngineInDir<E> {
    // Both are dropped by hand, in that order, in `Drop`.
    engine: ManuallyDrop<E>,
    dir: ManuallyDrop<DataDir>,
}

impl<E> EngineInDir<E> {
    /// `engine`, opened in the directory `dir` guards: `dir` is released
    /// only after `engine` is dropped.
    pub fn new(engine: E, dir: DataDir) -> Self {
        Self {
            engine: ManuallyDrop::new(engine),
            dir: ManuallyDrop::new(dir),
        }
    }

    /// The directory the engine is open in.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl<E> std::ops::Deref for EngineInDir<E> {
    type Target = E;

    fn deref(&self) -> &E {
        &self.engine
    }
}

impl<E> Drop for EngineInDir<E> {
    fn drop(&mut self) {
        // SAFETY: each field is dropped exactly once, here, and never used
        // after: `self` is being dropped. The engine first, so that the
        // directory stays locked until it has closed its files.
        unsafe {
            ManuallyDrop::drop(&mut self.engine);
            ManuallyDrop::drop(&mut self.dir);
        }
    }
}

/// The directory, not the engine: an engine handle is rarely `Debug`.
impl<E> std::fmt::Debug for EngineInDir<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineInDir")
            .field("dir", &self.path())
            .finish_non_exhaustive()
    }
}

/// Creates `path` and its missing parents, returning the directories it
/// made, outermost first.
fn create_dirs(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut at = Some(path);
    while let Some(dir) = at {
        if dir.as_os_str().is_empty() || dir.exists() {
            break;
        }
        missing.push(dir.to_path_buf());
        at = dir.parent();
    }
    missing.reverse();
    let mut made = Vec::new();
    for dir in missing {
        match std::fs::create_dir(&dir) {
            Ok(()) => made.push(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) => {
                for dir in made.iter().rev() {
                    let _ = std::fs::remove_dir(dir);
                }
                return Err(e);
            }
        }
    }
    Ok(made)
}

enum SurveyError {
    Refused(Refusal),
    Io(String, std::io::Error),
}

/// Classifies every entry of the directory against the layout.
fn survey(layout: &DirLayout, path: &Path) -> Result<Survey, SurveyError> {
    let read = |e| SurveyError::Io("list the directory".to_string(), e);
    let mut names: Vec<String> = Vec::new();
    let mut foreign: Vec<String> = Vec::new();
    for entry in std::fs::read_dir(path).map_err(read)? {
        let entry = entry.map_err(read)?;
        match entry.file_name().into_string() {
            Ok(name) => names.push(name),
            Err(name) => foreign.push(name.to_string_lossy().into_owned()),
        }
    }
    names.sort();
    let mut survey = Survey {
        owned: Vec::new(),
        marker: false,
        needs_marker: None,
    };
    for name in names {
        let Some(file) = layout.file_named(&name) else {
            foreign.push(name);
            continue;
        };
        let entry = path.join(&name);
        let meta = std::fs::symlink_metadata(&entry)
            .map_err(|e| SurveyError::Io(format!("read {name}"), e))?;
        let is_dir = meta.is_dir();
        if matches!(file.content, Content::Tree) != is_dir || !(is_dir || meta.is_file()) {
            let what = if is_dir {
                "a directory"
            } else {
                "not a regular file"
            };
            return Err(SurveyError::Refused(Refusal::NotTheEngines {
                file: name,
                starts_with: format!("nothing: it is {what}"),
            }));
        }
        if !is_dir && meta.len() > 0 {
            let sample = read_sample(&entry, meta.len())
                .map_err(|e| SurveyError::Io(format!("read {name}"), e))?;
            if !file.content.accepts(&sample) {
                return Err(SurveyError::Refused(Refusal::NotTheEngines {
                    file: name,
                    starts_with: describe_start(&sample),
                }));
            }
            if file.marker && !file.content.is_unchecked() {
                survey.marker = true;
            }
        }
        if file.content.is_unchecked() && survey.needs_marker.is_none() {
            survey.needs_marker = Some(name.clone());
        }
        survey.owned.push((name, is_dir));
    }
    if let Some(file) = foreign.first() {
        // The most telling file names the other engine: RocksDB's IDENTITY
        // before the CURRENT it shares with LevelDB.
        let looks_like = foreign
            .iter()
            .filter_map(|name| {
                looks_like_another_engine(path, name).map(|(rank, what)| (rank, what, name))
            })
            .min_by_key(|(rank, _, _)| *rank);
        let (looks_like, file) = match looks_like {
            Some((_, what, name)) => (Some(what), name.clone()),
            None => (None, file.clone()),
        };
        return Err(SurveyError::Refused(Refusal::Foreign {
            file,
            looks_like,
            beside_database: survey.marker,
        }));
    }
    if !survey.marker {
        if let Some(file) = survey.needs_marker.take() {
            // Names the engine shares with another (LevelDB's CURRENT in a
            // RocksDB layout) may tell whose database it is.
            let other = survey
                .owned
                .iter()
                .filter_map(|(name, _)| {
                    looks_like_another_engine(path, name).map(|(rank, what)| (rank, what, name))
                })
                .min_by_key(|(rank, _, _)| *rank);
            if let Some((_, what, name)) = other {
                return Err(SurveyError::Refused(Refusal::Foreign {
                    file: name.clone(),
                    looks_like: Some(what),
                    beside_database: false,
                }));
            }
            return Err(SurveyError::Refused(Refusal::NoMarker {
                file,
                markers: layout.marker_names(),
            }));
        }
    }
    Ok(survey)
}

/// Checks the files of a database kept in one file, named after it
/// (`names`: each file's name, the layout's name, its declaration), in a
/// directory whose other files are not looked at; returns the ones there.
fn survey_named(
    dir: &Path,
    names: &[(String, &'static str, &EngineFile)],
) -> Result<Vec<String>, SurveyError> {
    let mut owned = Vec::new();
    let (mut marker, mut needs_marker) = (false, None);
    for (name, _, file) in names {
        let entry = dir.join(name);
        let meta = match std::fs::symlink_metadata(&entry) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(SurveyError::Io(format!("read {name}"), e)),
        };
        if !meta.is_file() {
            let what = if meta.is_dir() {
                "a directory"
            } else {
                "not a regular file"
            };
            return Err(SurveyError::Refused(Refusal::NotTheEngines {
                file: name.clone(),
                starts_with: format!("nothing: it is {what}"),
            }));
        }
        if meta.len() > 0 {
            let sample = read_sample(&entry, meta.len())
                .map_err(|e| SurveyError::Io(format!("read {name}"), e))?;
            if !file.content.accepts(&sample) {
                return Err(SurveyError::Refused(Refusal::NotTheEngines {
                    file: name.clone(),
                    starts_with: describe_start(&sample),
                }));
            }
            if file.marker && !file.content.is_unchecked() {
                marker = true;
            }
        }
        if file.content.is_unchecked() && needs_marker.is_none() {
            needs_marker = Some(name.clone());
        }
        owned.push(name.clone());
    }
    if let (false, Some(file)) = (marker, needs_marker) {
        return Err(SurveyError::Refused(Refusal::NoMarker {
            file,
            markers: names
                .iter()
                .filter(|(_, _, f)| f.marker)
                .map(|(n, _, _)| n.clone())
                .collect::<Vec<_>>()
                .join(" or "),
        }));
    }
    Ok(owned)
}

/// The first bytes of a file, and its last ones where they fit.
fn read_sample(path: &Path, len: u64) -> std::io::Result<Vec<u8>> {
    let mut sample = Vec::with_capacity(SAMPLE_BYTES);
    File::open(path)?
        .take(SAMPLE_BYTES as u64)
        .read_to_end(&mut sample)?;
    debug_assert!(sample.len() as u64 <= len);
    Ok(sample)
}

/// The start of a file in a message: text as text, anything else in hex.
fn describe_start(sample: &[u8]) -> String {
    let head = &sample[..sample.len().min(16)];
    if head
        .iter()
        .all(|&b| b.is_ascii_graphic() || b == b' ' || b == b'\n' || b == b'\t')
    {
        format!("{:?}", String::from_utf8_lossy(head))
    } else {
        let hex: Vec<String> = head.iter().map(|b| format!("{b:02x}")).collect();
        format!("bytes {}", hex.join(" "))
    }
}

/// Names another engine's database when `path` is one of its telltale
/// files, for a refusal that says what the directory holds. Only for the
/// message: whether the file is refused does not depend on it.
/// The rank orders the guesses from the most telling.
fn looks_like_another_engine(dir: &Path, name: &str) -> Option<(usize, &'static str)> {
    let path = dir.join(name);
    let path = path.as_path();
    let meta = std::fs::metadata(path).ok()?;
    let sample = if meta.is_file() && meta.len() > 0 {
        read_sample(path, meta.len()).ok()?
    } else {
        Vec::new()
    };
    let guesses: [(bool, &'static str); 7] = [
        (
            name == "IDENTITY" || name.starts_with("OPTIONS-"),
            "a RocksDB database",
        ),
        (
            sample.starts_with(b"SQLite format 3\0"),
            "a SQLite database",
        ),
        (
            sample.get(16..20) == Some(&0xBEEF_C0DE_u32.to_le_bytes()[..]),
            "an LMDB environment",
        ),
        (sample.starts_with(b"WiredTiger\n"), "a WiredTiger database"),
        (
            sample.starts_with(b"redb\x1a\x0a\xa9\x0d\x0a"),
            "a redb database",
        ),
        (
            name == "version" && sample.starts_with(b"FJL"),
            "a fjall database",
        ),
        // RocksDB writes one too, but always beside its IDENTITY.
        (
            name == "CURRENT" && sample.starts_with(b"MANIFEST-"),
            "a LevelDB database",
        ),
    ];
    guesses
        .iter()
        .position(|(found, _)| *found)
        .map(|rank| (rank, guesses[rank].1))
}

/// Whether another process holds the engine's lock on `path`.
fn engine_lock_held(path: &Path, lock: &EngineLock) -> std::io::Result<Option<Refusal>> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let held = |pid| Refusal::EngineLocked {
        file: lock.file.to_string(),
        pid,
    };
    match lock.kind {
        LockKind::Flock => match file.try_lock() {
            // Unlocked before closing, as `DataDir`'s drop, so that a
            // child forked meanwhile cannot keep the probe's lock.
            Ok(()) => file.unlock().map(|()| None),
            Err(std::fs::TryLockError::WouldBlock) => Ok(Some(held(None))),
            Err(std::fs::TryLockError::Error(e)) => Err(e),
        },
        LockKind::Record => {
            record_lock_holder(&file).map(|holder| holder.map(|pid| held((pid > 0).then_some(pid))))
        }
    }
}

/// The process holding a POSIX record lock anywhere in `file` that a
/// write lock of this process would conflict with (`F_GETLK`, which
/// takes no lock). This process's own locks never conflict: the guard
/// runs before the engine opens.
fn record_lock_holder(file: &File) -> std::io::Result<Option<i32>> {
    use std::os::fd::AsRawFd;
    // SAFETY: a zeroed flock is a valid value of the plain C struct.
    let mut query: libc::flock = unsafe { std::mem::zeroed() };
    query.l_type = libc::F_WRLCK as libc::c_short;
    query.l_whence = libc::SEEK_SET as libc::c_short;
    query.l_start = 0;
    query.l_len = 0;
    // SAFETY: the descriptor is open for the call; F_GETLK writes only
    // into `query`, which lives across it.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GETLK, &mut query) };
    if rc == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok((query.l_type != libc::F_UNLCK as libc::c_short).then_some(query.l_pid))
}

/// How the guard's errors name the store and the setting it was given.
struct Errors {
    store: &'static str,
    engine: &'static str,
    property: &'static str,
    /// `property=path (origin)`.
    setting: String,
}

impl Errors {
    /// The errors of opening what `setting` names for the store `store`,
    /// whose engine keeps `layout`.
    fn new(store: &'static str, layout: &DirLayout, setting: &DirSetting) -> Errors {
        Errors {
            store,
            engine: layout.engine,
            property: setting.property,
            setting: format!(
                "{}={} ({})",
                setting.property,
                setting.path.display(),
                setting.origin
            ),
        }
    }

    /// The directory `dir`, opened and locked exclusively (`flock`, which
    /// goes with the open file); a lock held elsewhere is the refusal
    /// `in_use` makes.
    fn lock(
        &self,
        dir: &Path,
        in_use: impl FnOnce() -> Refusal,
    ) -> Result<File, Box<DataDirError>> {
        let lock = File::open(dir).map_err(|e| self.io("open the directory", e))?;
        match lock.try_lock() {
            Ok(()) => Ok(lock),
            Err(std::fs::TryLockError::WouldBlock) => Err(self.refuse(in_use())),
            Err(std::fs::TryLockError::Error(e)) => Err(self.io("lock the directory", e)),
        }
    }

    fn refuse(&self, reason: Refusal) -> Box<DataDirError> {
        Box::new(DataDirError::Refused {
            store: self.store,
            engine: self.engine,
            setting: self.setting.clone(),
            property: self.property,
            reason,
        })
    }

    fn io(&self, doing: &str, source: std::io::Error) -> Box<DataDirError> {
        Box::new(DataDirError::Io {
            store: self.store,
            setting: self.setting.clone(),
            doing: doing.to_string(),
            source,
        })
    }
}

/// The directory holding the database file `path` (`.` for a bare file
/// name), created when missing, with the directories this made (removed
/// again if the open is refused); or what failed, and doing what.
fn file_directory(path: &Path) -> Result<(PathBuf, Vec<PathBuf>), (&'static str, std::io::Error)> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let created = match std::fs::metadata(&dir) {
        Ok(meta) if meta.is_dir() => Vec::new(),
        Ok(_) => {
            return Err((
                "use the directory",
                std::io::Error::from_raw_os_error(libc::ENOTDIR),
            ))
        }
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.raw_os_error() == Some(libc::ENOTDIR) =>
        {
            create_dirs(&dir).map_err(|e| ("create the directory", e))?
        }
        Err(e) => return Err(("read the directory", e)),
    };
    Ok((dir, created))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAYOUT: DirLayout = DirLayout {
        engine: "Test",
        files: &[
            EngineFile::marker(Name::Exact("DB"), Content::Prefix(b"TESTDB")),
            EngineFile::owned(Name::Exact("LOCK"), Content::Prefix(b"lock")),
            EngineFile::owned(Name::Numbered("", ".tbl"), Content::Unchecked),
            EngineFile::owned(Name::Exact("parts"), Content::Tree),
        ],
        locks: &[EngineLock {
            file: "LOCK",
            kind: LockKind::Record,
        }],
    };

    fn open(path: &Path, destroy: bool) -> Result<DataDir, Box<DataDirError>> {
        DataDir::open(
            "test",
            &LAYOUT,
            &DirSetting::new("test.dir", path, "-p", destroy),
        )
    }

    /// A database in one file with companions named after it, as SQLite's.
    const ONE_FILE: DirLayout = DirLayout {
        engine: "Test",
        files: &[
            EngineFile::marker(Name::Exact("db"), Content::Prefix(b"TESTDB")),
            EngineFile::owned(Name::Exact("db-log"), Content::Prefix(b"log")),
            EngineFile::owned(Name::Exact("db-shm"), Content::Unchecked),
        ],
        locks: &[EngineLock {
            file: "db",
            kind: LockKind::Record,
        }],
    };

    fn open_file(path: &Path, destroy: bool) -> Result<DataDir, Box<DataDirError>> {
        let setting = DirSetting::new("test.path", path, "-p", destroy);
        DataDir::open_file("test", &ONE_FILE, &setting)
    }

    #[test]
    fn a_database_file_is_checked_among_other_files_which_stay_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        std::fs::write(d.join("x.db"), "TESTDB...").unwrap();
        std::fs::write(d.join("x.db-log"), "log...").unwrap();
        std::fs::write(d.join("x.db-shm"), "anything").unwrap();
        // Another database's files beside it are not this one's.
        std::fs::write(d.join("y.db-shm"), "anything").unwrap();
        let guard = open_file(&d.join("x.db"), false).unwrap();
        assert_eq!(guard.path(), d);
        // A second database of the directory waits for the first.
        let err = open_file(&d.join("y.db"), false).unwrap_err().to_string();
        assert!(
            err.contains("one database file of a directory is used at a time"),
            "{err}"
        );
        drop(guard);
        drop(open_file(&d.join("x.db"), true).unwrap());
        assert_eq!(
            listing(d),
            ["notes.txt", "y.db-shm"],
            "only x.db's files went"
        );
        // A database file in a missing directory: the directory is made.
        let deep = d.join("a/b/new.db");
        drop(open_file(&deep, false).unwrap());
        assert!(d.join("a/b").is_dir());
    }

    #[test]
    fn a_database_file_that_is_not_the_engine_s_is_refused_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("x.db"), "not a database").unwrap();
        let refused = refusal(open_file(&d.join("x.db"), true));
        assert!(
            matches!(refused, Refusal::NotTheEngines { ref file, .. } if file == "x.db"),
            "{refused:?}"
        );
        assert_eq!(std::fs::read(d.join("x.db")).unwrap(), b"not a database");
        // An unchecked companion alone is not a database.
        std::fs::write(d.join("z.db-shm"), "?").unwrap();
        assert_eq!(
            refusal(open_file(&d.join("z.db"), true)),
            Refusal::NoMarker {
                file: "z.db-shm".into(),
                markers: "z.db".into()
            }
        );
        assert!(d.join("z.db-shm").exists());
        assert_eq!(refusal(open_file(d, false)), Refusal::NotAFile);
        // A database file's name that is not the engine's file, below, and
        // a directory with a file's name.
        std::fs::create_dir(d.join("dir.db")).unwrap();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/q.db"), "nope").unwrap();
        assert!(matches!(
            refusal(open_file(&d.join("sub/q.db"), false)),
            Refusal::NotTheEngines { .. }
        ));
        assert_eq!(
            refusal(open_file(&d.join("dir.db"), false)),
            Refusal::NotAFile
        );
    }

    #[test]
    fn a_database_file_another_process_locks_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        std::fs::write(&db, "TESTDB").unwrap();
        let _holder = hold_record_lock_in_child(&db);
        let refused = refusal(open_file(&db, true));
        assert!(
            matches!(refused, Refusal::EngineLocked { ref file, .. } if file == "x.db"),
            "{refused:?}"
        );
        assert!(db.exists());
    }

    fn listing(path: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    fn refusal(result: Result<DataDir, Box<DataDirError>>) -> Refusal {
        match result {
            Ok(_) => panic!("opened"),
            Err(e) => e.refusal().cloned().unwrap_or_else(|| panic!("{e}")),
        }
    }

    #[test]
    fn names_match_as_declared() {
        assert!(Name::Numbered("", ".sst").matches("000012.sst"));
        assert!(!Name::Numbered("", ".sst").matches(".sst"));
        assert!(!Name::Numbered("", ".sst").matches("00a1.sst"));
        assert!(Name::Numbered("WiredTigerLog.", "").matches("WiredTigerLog.0000000001"));
        assert!(Name::Prefix("MANIFEST-").matches("MANIFEST-000005"));
        assert!(!Name::Prefix("MANIFEST-").matches("MANIFEST-"));
        assert!(Name::Exact("LOG").matches("LOG") && !Name::Exact("LOG").matches("LOG2"));
    }

    #[test]
    fn a_missing_directory_is_created_and_a_database_opens() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/b");
        let guard = open(&dir, false).unwrap();
        assert!(dir.is_dir());
        assert_eq!(guard.path(), dir);
        drop(guard);
        std::fs::write(dir.join("DB"), b"TESTDB v1").unwrap();
        std::fs::write(dir.join("000001.tbl"), b"whatever").unwrap();
        std::fs::create_dir(dir.join("parts")).unwrap();
        std::fs::write(dir.join("parts/x"), b"x").unwrap();
        open(&dir, false).unwrap();
    }

    #[test]
    fn a_second_open_is_refused_while_the_first_lives() {
        let dir = tempfile::tempdir().unwrap();
        let first = open(dir.path(), false).unwrap();
        assert_eq!(refusal(open(dir.path(), true)), Refusal::InUse);
        drop(first);
        open(dir.path(), true).unwrap();
    }

    /// An engine that, as it closes, records whether its directory is
    /// still locked: whether a second open is refused then.
    struct ClosingEngine {
        path: PathBuf,
        locked_while_closing: std::rc::Rc<std::cell::Cell<Option<bool>>>,
    }

    impl Drop for ClosingEngine {
        fn drop(&mut self) {
            let second = open(&self.path, false);
            self.locked_while_closing.set(Some(
                second.is_err_and(|e| e.refusal() == Some(&Refusal::InUse)),
            ));
        }
    }

    #[test]
    fn an_engine_in_its_directory_closes_before_the_directory_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let locked_while_closing = std::rc::Rc::default();
        let setting = DirSetting::new("test.dir", dir.path(), "-p", false);
        let held = setting
            .open_engine("test", &LAYOUT, |path| {
                Ok(ClosingEngine {
                    path: path.to_path_buf(),
                    locked_while_closing: std::rc::Rc::clone(&locked_while_closing),
                })
            })
            .unwrap();
        assert_eq!(held.path(), dir.path());
        assert_eq!(held.path, dir.path(), "derefs to the engine");
        assert_eq!(refusal(open(dir.path(), false)), Refusal::InUse);
        drop(held);
        assert_eq!(locked_while_closing.get(), Some(true));
        open(dir.path(), false).unwrap();
    }

    #[test]
    fn an_engine_in_its_directory_shows_the_directory_without_the_engine() {
        struct NotDebug;
        let dir = tempfile::tempdir().unwrap();
        let held = EngineInDir::new(NotDebug, open(dir.path(), false).unwrap());
        assert_eq!(
            format!("{held:?}"),
            format!("EngineInDir {{ dir: {:?}, .. }}", dir.path())
        );
    }

    #[test]
    fn an_engine_that_fails_to_open_leaves_the_directory_free() {
        let dir = tempfile::tempdir().unwrap();
        let setting = DirSetting::new("test.dir", dir.path(), "-p", false);
        let err = setting
            .open_engine("test", &LAYOUT, |_| Err::<(), _>("no".to_string()))
            .unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
        open(dir.path(), false).unwrap();
    }

    #[test]
    fn a_child_forked_while_the_directory_is_held_does_not_keep_it() {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let guard = open(dir.path(), false).unwrap();
        // Another thread spawns a process: between its fork and its exec
        // the child shares every descriptor of this process, the
        // directory's too (`spawn` returns only once the exec is done).
        let spawning = std::thread::spawn(|| {
            let mut command = std::process::Command::new("true");
            // SAFETY: the hook only sleeps, which is async-signal-safe.
            unsafe {
                command.pre_exec(|| {
                    std::thread::sleep(std::time::Duration::from_millis(1500));
                    Ok(())
                });
            }
            command.spawn().unwrap().wait().unwrap();
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(guard);
        let reopened = open(dir.path(), false);
        spawning.join().unwrap();
        assert!(reopened.is_ok(), "{:?}", reopened.err());
    }

    #[test]
    fn a_file_with_the_engine_s_name_but_not_its_content_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("DB"), "keep me\n").unwrap();
        for destroy in [false, true] {
            let r = refusal(open(dir.path(), destroy));
            assert!(
                matches!(&r, Refusal::NotTheEngines { file, starts_with } if file == "DB" && starts_with.contains("keep me")),
                "{r:?}"
            );
            assert_eq!(listing(dir.path()), ["DB"]);
            assert_eq!(
                std::fs::read_to_string(dir.path().join("DB")).unwrap(),
                "keep me\n"
            );
        }
    }

    #[test]
    fn destroy_removes_the_engine_s_files_only_and_refuses_beside_others() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::write(p.join("DB"), b"TESTDB").unwrap();
        std::fs::write(p.join("LOCK"), b"lock").unwrap();
        std::fs::write(p.join("000007.tbl"), b"t").unwrap();
        std::fs::create_dir(p.join("parts")).unwrap();
        std::fs::write(p.join("parts/1"), b"x").unwrap();
        std::fs::write(p.join("notes.txt"), b"mine").unwrap();
        let r = refusal(open(p, true));
        assert!(
            matches!(&r, Refusal::Foreign { file, beside_database: true, .. } if file == "notes.txt"),
            "{r:?}"
        );
        assert_eq!(
            listing(p),
            ["000007.tbl", "DB", "LOCK", "notes.txt", "parts"]
        );
        std::fs::remove_file(p.join("notes.txt")).unwrap();
        drop(open(p, true).unwrap());
        assert!(listing(p).is_empty());
    }

    #[test]
    fn unchecked_files_without_a_marker_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("000001.tbl"), b"t").unwrap();
        assert_eq!(
            refusal(open(dir.path(), true)),
            Refusal::NoMarker {
                file: "000001.tbl".into(),
                markers: "DB".into()
            }
        );
        assert_eq!(listing(dir.path()), ["000001.tbl"]);
        // Checked files alone are a database being created.
        std::fs::remove_file(dir.path().join("000001.tbl")).unwrap();
        std::fs::write(dir.path().join("LOCK"), b"lock").unwrap();
        open(dir.path(), false).unwrap();
    }

    #[test]
    fn another_engine_s_database_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("x.db"), b"SQLite format 3\0rest").unwrap();
        let r = refusal(open(dir.path(), false));
        assert!(
            matches!(
                &r,
                Refusal::Foreign {
                    looks_like: Some("a SQLite database"),
                    ..
                }
            ),
            "{r:?}"
        );
        assert!(r.describe("Test").contains("a SQLite database"), "{r:?}");
    }

    #[test]
    fn a_file_is_not_a_directory_and_a_refusal_leaves_no_directory_behind() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("f");
        std::fs::write(&file, b"x").unwrap();
        assert_eq!(refusal(open(&file, false)), Refusal::NotADirectory);
        // A held directory: the new subdirectory made for the check goes.
        let held = open(root.path(), false);
        drop(held);
        let err = open(&file.join("db"), false).unwrap_err();
        assert!(matches!(*err, DataDirError::Io { .. }), "{err}");
        assert!(
            err.to_string().contains("cannot create the directory"),
            "{err}"
        );
        assert_eq!(listing(root.path()), ["f"]);
    }

    #[test]
    fn a_record_lock_of_another_process_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("DB"), b"TESTDB").unwrap();
        std::fs::write(dir.path().join("LOCK"), b"lock").unwrap();
        let mut child = hold_record_lock_in_child(&dir.path().join("LOCK"));
        let r = refusal(open(dir.path(), true));
        let _ = child.0.kill();
        let _ = child.0.wait();
        assert!(
            matches!(&r, Refusal::EngineLocked { file, pid: Some(pid) } if file == "LOCK" && *pid == child.0.id() as i32),
            "{r:?}"
        );
        assert_eq!(listing(dir.path()), ["DB", "LOCK"]);
        open(dir.path(), true).unwrap();
    }

    /// A child process holding a POSIX record lock on `path` until
    /// dropped.
    struct LockHolder(std::process::Child);

    impl Drop for LockHolder {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    fn hold_record_lock_in_child(path: &Path) -> LockHolder {
        // flock(1) would take a whole-file flock; a record lock needs a
        // process of its own: python's fcntl.lockf is POSIX's.
        let mut child = std::process::Command::new("python3")
            .args([
                "-c",
                "import fcntl,sys,time\nf=open(sys.argv[1],'r+')\nfcntl.lockf(f,fcntl.LOCK_EX)\nprint('locked',flush=True)\ntime.sleep(30)",
            ])
            .arg(path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3");
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        assert_eq!(line.trim(), "locked");
        LockHolder(child)
    }
}
