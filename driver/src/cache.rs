//! The persistent compilation cache: what compiling a program for the CPU
//! produced (the optimized temporal program and the object code of its
//! partitions), kept on disk so that another process compiling the same
//! program with the same options loads it instead.
//!
//! - **Key**: SHA-256 of the program as given (its MLIR bytecode, with
//!   its locations), every option that changes the compiled code (bounds,
//!   optimization level and disabled passes, memory budget, fast math,
//!   threads, LLVM level, target, source name), the host CPU and its
//!   features, and the compiler's own fingerprint (a hash of its sources
//!   taken at build time, [`COMPILER`]).
//! - **Where**: `TEMPO_CACHE_DIR`, else `$XDG_CACHE_HOME/tempo`, else
//!   `~/.cache/tempo`; `TEMPO_CACHE=0` turns the cache off. One file per
//!   entry, `KEY.tempo`.
//! - **Entries are written atomically**: to a temporary file of a unique
//!   name in the same directory, then renamed over the entry, so a reader
//!   sees a whole entry or none, whatever concurrent writers or a process
//!   killed mid-write do. An entry whose header, key or checksum (SHA-256
//!   of its content, stored last) does not match is ignored, deleted and
//!   rebuilt.
//! - **Bounded**: at most `TEMPO_CACHE_MAX_BYTES` (default 1 GiB); after a
//!   store, the least recently used entries (modification time, refreshed
//!   on every hit) are deleted until the rest fits. Temporary files left
//!   by killed writers are deleted after an hour.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// The compiler's fingerprint: its version and a hash of the sources of
/// the crates that compile (dialects, passes, lowering, runtime), taken by
/// `runtime/build.rs`.
pub const COMPILER: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("TEMPO_SOURCES_HASH"));

const MAGIC: &[u8] = b"TEMPO-CACHE 2\n";
const DEFAULT_MAX_BYTES: u64 = 1 << 30;
const SUFFIX: &str = "tempo";

/// A compiled program as the cache keeps it.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// The optimized temporal program as MLIR bytecode (with locations):
    /// parsed three to four times faster than its text, which was most of
    /// a warm start (the 16-layer PPO program: 55-90 ms of 115-150).
    pub program: Vec<u8>,
    /// Whether the code calls the OpenMP runtime.
    pub openmp: bool,
    /// The object code, one per partition.
    pub objects: Vec<Vec<u8>>,
}

/// What the cache did for a compilation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Loaded from this entry.
    Hit(PathBuf),
    /// Compiled, then stored here (or not, with the reason).
    Miss { entry: PathBuf, stored: Result<(), String> },
}

/// A cache directory.
#[derive(Clone, Debug)]
pub struct Cache {
    pub dir: PathBuf,
    pub max_bytes: u64,
}

impl Cache {
    /// The cache the environment configures (see the module's doc), or
    /// `None` when it is off or there is no directory to use.
    pub fn from_env() -> Option<Cache> {
        if std::env::var("TEMPO_CACHE").is_ok_and(|v| v == "0") {
            return None;
        }
        let nonempty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let dir = nonempty("TEMPO_CACHE_DIR")
            .or_else(|| nonempty("XDG_CACHE_HOME").map(|d| d.join("tempo")))
            .or_else(|| nonempty("HOME").map(|d| d.join(".cache").join("tempo")))?;
        let max_bytes =
            std::env::var("TEMPO_CACHE_MAX_BYTES").ok().and_then(|v| v.parse().ok()).unwrap_or(DEFAULT_MAX_BYTES);
        Some(Cache { dir, max_bytes })
    }

    /// The key of `parts` (each length-prefixed, so no two sequences of
    /// parts collide by concatenation): 64 hex digits.
    pub fn key(parts: &[&[u8]]) -> String {
        let mut hash = Sha256::new();
        for part in parts {
            hash.update((part.len() as u64).to_le_bytes());
            hash.update(part);
        }
        hex(&hash.finalize())
    }

    /// The path of the entry of `key`.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.{SUFFIX}"))
    }

    /// The entry of `key`, if there is a valid one (a corrupt or foreign
    /// one is deleted); a hit marks it used now.
    pub fn load(&self, key: &str) -> Option<Entry> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok()?;
        match decode(&bytes, key) {
            Some(entry) => {
                // Used now: the last to be evicted.
                if let Ok(file) = std::fs::File::options().write(true).open(&path) {
                    let _ = file.set_modified(SystemTime::now());
                }
                Some(entry)
            }
            None => {
                let _ = std::fs::remove_file(&path);
                None
            }
        }
    }

    /// Stores `entry` under `key` (atomically), then evicts what exceeds
    /// the size bound.
    pub fn store(&self, key: &str, entry: &Entry) -> Result<(), String> {
        std::fs::create_dir_all(&self.dir).map_err(|e| format!("cannot create '{}': {e}", self.dir.display()))?;
        let bytes = encode(entry, key);
        static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let temporary = self.dir.join(format!(".tmp-{}-{serial}-{nanos}", std::process::id()));
        let written = (|| -> std::io::Result<()> {
            let mut file = std::fs::File::create(&temporary)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            std::fs::rename(&temporary, self.path(key))
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temporary);
            return Err(format!("cannot write the cache entry in '{}': {e}", self.dir.display()));
        }
        self.evict();
        Ok(())
    }

    /// Deletes the least recently used entries until the rest fits in
    /// `max_bytes`, and temporary files older than an hour.
    pub fn evict(&self) {
        let Ok(listing) = std::fs::read_dir(&self.dir) else { return };
        let now = SystemTime::now();
        let mut entries: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
        for item in listing.flatten() {
            let path = item.path();
            let Ok(meta) = item.metadata() else { continue };
            let modified = meta.modified().unwrap_or(now);
            let name = item.file_name().to_string_lossy().into_owned();
            if name.starts_with(".tmp-") {
                if now.duration_since(modified).unwrap_or_default() > Duration::from_secs(3600) {
                    let _ = std::fs::remove_file(&path);
                }
            } else if path.extension().is_some_and(|e| e == SUFFIX) {
                entries.push((modified, meta.len(), path));
            }
        }
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        entries.sort_by_key(|e| e.0);
        for (_, size, path) in entries {
            if total <= self.max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= size;
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `MAGIC`, the key and a newline, the section count, each section
/// (length, bytes): the program, the flags, the objects; then SHA-256 of
/// all that.
fn encode(entry: &Entry, key: &str) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(key.as_bytes());
    out.push(b'\n');
    let flags = [u8::from(entry.openmp)];
    let sections: Vec<&[u8]> =
        [entry.program.as_slice(), &flags[..]].into_iter().chain(entry.objects.iter().map(|o| o.as_slice())).collect();
    out.extend_from_slice(&(sections.len() as u64).to_le_bytes());
    for s in sections {
        out.extend_from_slice(&(s.len() as u64).to_le_bytes());
        out.extend_from_slice(s);
    }
    let sum = Sha256::digest(&out);
    out.extend_from_slice(&sum);
    out
}

fn decode(bytes: &[u8], key: &str) -> Option<Entry> {
    let (content, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if Sha256::digest(content).as_slice() != sum {
        return None;
    }
    let rest = content.strip_prefix(MAGIC)?;
    let rest = rest.strip_prefix(key.as_bytes())?.strip_prefix(b"\n")?;
    let word = |r: &[u8]| -> Option<(u64, usize)> { Some((u64::from_le_bytes(r.get(..8)?.try_into().ok()?), 8)) };
    let (count, n) = word(rest)?;
    let mut at = n;
    let mut sections = Vec::new();
    for _ in 0..count {
        let (len, n) = word(&rest[at..])?;
        at += n;
        let end = at.checked_add(usize::try_from(len).ok()?)?;
        sections.push(rest.get(at..end)?);
        at = end;
    }
    if at != rest.len() || sections.len() < 2 {
        return None;
    }
    Some(Entry {
        program: sections[0].to_vec(),
        openmp: *sections[1].first()? != 0,
        objects: sections[2..].iter().map(|s| s.to_vec()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry { program: b"module {}".to_vec(), openmp: true, objects: vec![vec![1, 2, 3], vec![4; 100]] }
    }

    fn scratch(name: &str) -> Cache {
        let dir = std::env::temp_dir().join(format!("tempo-cache-test-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Cache { dir, max_bytes: 1 << 20 }
    }

    #[test]
    fn round_trip_and_miss_on_any_key_change() {
        let cache = scratch("round-trip");
        let key = Cache::key(&[b"program", b"options"]);
        assert_eq!(cache.load(&key), None);
        cache.store(&key, &entry()).unwrap();
        assert_eq!(cache.load(&key), Some(entry()));
        // Any part changing, or parts moving across the boundary, is
        // another key.
        for other in [Cache::key(&[b"program", b"option"]), Cache::key(&[b"programo", b"ptions"])] {
            assert_ne!(other, key);
            assert_eq!(cache.load(&other), None);
        }
        let _ = std::fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn corrupt_or_foreign_entries_are_ignored_and_deleted() {
        let cache = scratch("corrupt");
        let key = Cache::key(&[b"a"]);
        cache.store(&key, &entry()).unwrap();
        let path = cache.path(&key);
        let mut bytes = std::fs::read(&path).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle] ^= 0xff;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(cache.load(&key), None);
        assert!(!path.exists(), "a corrupt entry is deleted");
        // An entry of another key under this name (a renamed file).
        let other = Cache::key(&[b"b"]);
        cache.store(&other, &entry()).unwrap();
        std::fs::rename(cache.path(&other), &path).unwrap();
        assert_eq!(cache.load(&key), None);
        // Truncated.
        cache.store(&key, &entry()).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
        assert_eq!(cache.load(&key), None);
        let _ = std::fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn least_recently_used_entries_are_evicted() {
        let mut cache = scratch("evict");
        let size = encode(&entry(), &Cache::key(&[b"0"])).len() as u64;
        // Room for three entries.
        cache.max_bytes = 3 * size;
        let keys: Vec<String> = (0..4).map(|k| Cache::key(&[format!("{k}").as_bytes()])).collect();
        for (k, key) in keys.iter().enumerate().take(3) {
            cache.store(key, &entry()).unwrap();
            // Distinct use times, oldest first.
            let at = SystemTime::now() - Duration::from_secs(100 - k as u64);
            std::fs::File::options().write(true).open(cache.path(key)).unwrap().set_modified(at).unwrap();
        }
        // Entry 0 is used again: entry 1 is now the least recently used.
        assert!(cache.load(&keys[0]).is_some());
        cache.store(&keys[3], &entry()).unwrap();
        assert!(cache.path(&keys[0]).exists());
        assert!(!cache.path(&keys[1]).exists(), "the least recently used entry is evicted");
        assert!(cache.path(&keys[2]).exists());
        assert!(cache.path(&keys[3]).exists());
        let _ = std::fs::remove_dir_all(&cache.dir);
    }

    #[test]
    fn concurrent_writers_leave_one_whole_entry() {
        let mut cache = scratch("concurrent");
        cache.max_bytes = 1 << 30;
        let key = Cache::key(&[b"shared"]);
        let big = Entry { program: vec![b'x'; 1 << 16], openmp: false, objects: vec![vec![7; 1 << 18]; 4] };
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..5 {
                        cache.store(&key, &big).unwrap();
                        // Every read sees a whole entry (or, between a
                        // writer's rename and another's, the same one).
                        assert_eq!(cache.load(&key).as_ref(), Some(&big));
                    }
                });
            }
        });
        let leftovers = std::fs::read_dir(&cache.dir).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary files left behind");
        let _ = std::fs::remove_dir_all(&cache.dir);
    }
}
