//! An opened input: a file (or standard input) and what kind of file it is.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::os::unix::fs::{FileExt, FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::{Error, Result};

/// What kind of file an [`Input`] is. Only regular files have a size that methods which
/// need one (mmap, O_DIRECT, io_uring with offsets) can trust.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FileKind {
    /// A regular file.
    Regular,
    /// A named or anonymous pipe.
    Fifo,
    /// A character device (a terminal, `/dev/zero`, …).
    CharDevice,
    /// A block device.
    BlockDevice,
    /// A socket.
    Socket,
}

impl FileKind {
    /// The kind in words, for error messages.
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::Regular => "regular file",
            FileKind::Fifo => "FIFO",
            FileKind::CharDevice => "character device",
            FileKind::BlockDevice => "block device",
            FileKind::Socket => "socket",
        }
    }
}

/// An open file to read, with its kind and reported size.
///
/// Streaming methods read from the file's current position, so an `Input` is meant for one
/// run: open a new one for the next.
#[derive(Debug)]
pub struct Input {
    file: File,
    kind: FileKind,
    len: u64,
    start: u64,
}

impl Input {
    /// Opens `path` for reading. A directory is refused here, with [`Error::IsDirectory`].
    pub fn open(path: impl AsRef<Path>) -> Result<Input> {
        let file = File::open(path.as_ref()).map_err(|e| Error::io("cannot open", e))?;
        Input::from_file(file)
    }

    /// Opens `path` to inspect it before use: with `O_NONBLOCK`, so that a FIFO without a
    /// writer is refused by its kind instead of blocking the open. Call
    /// [`Input::set_blocking`] before reading through it.
    pub fn open_to_probe(path: &Path) -> Result<Input> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)
            .map_err(|e| Error::io("cannot open", e))?;
        Input::from_file(file)
    }

    /// Clears `O_NONBLOCK` (see [`Input::open_to_probe`]): on a regular file it changes
    /// nothing for `read`, but io_uring hands back `EAGAIN` for every uncached block of a
    /// non-blocking descriptor instead of waiting for it.
    pub fn set_blocking(&self) -> Result<()> {
        let fd = self.file.as_raw_fd();
        // SAFETY: F_GETFL/F_SETFL only read and set the open descriptor's status flags.
        let cleared = unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            flags >= 0 && libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) == 0
        };
        if cleared {
            Ok(())
        } else {
            Err(Error::io(
                "fcntl(F_SETFL) failed",
                io::Error::last_os_error(),
            ))
        }
    }

    /// Standard input (a duplicate of file descriptor 0).
    pub fn stdin() -> Result<Input> {
        let fd = io::stdin()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| Error::io("cannot use standard input", e))?;
        Input::from_file(File::from(fd))
    }

    /// Wraps an already open file.
    pub fn from_file(file: File) -> Result<Input> {
        let meta = file.metadata().map_err(|e| Error::io("cannot stat", e))?;
        let ft = meta.file_type();
        let kind = if ft.is_dir() {
            return Err(Error::IsDirectory);
        } else if ft.is_file() {
            FileKind::Regular
        } else if ft.is_fifo() {
            FileKind::Fifo
        } else if ft.is_char_device() {
            FileKind::CharDevice
        } else if ft.is_block_device() {
            FileKind::BlockDevice
        } else {
            FileKind::Socket
        };
        // Standard input may be a file someone has already read part of
        // (`{ read first; iolab count; } < file`): methods that read by offset start here.
        let start = if kind == FileKind::Regular {
            // SAFETY: lseek with SEEK_CUR and offset 0 only reports the position.
            let pos = unsafe { libc::lseek(file.as_raw_fd(), 0, libc::SEEK_CUR) };
            u64::try_from(pos).unwrap_or(0).min(meta.len())
        } else {
            0
        };
        Ok(Input {
            file,
            kind,
            len: meta.len(),
            start,
        })
    }

    /// The open file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The raw file descriptor.
    pub fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// What kind of file this is.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// The size `fstat` reported when the input was opened (0 for pipes and devices).
    pub fn reported_len(&self) -> u64 {
        self.len
    }

    /// The file offset reading starts at: 0 for a file opened by path, possibly more for
    /// standard input redirected from a file that was partly read already.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The size of the file from [`Input::start`] on, for methods that need a size they
    /// can trust.
    ///
    /// Refuses non-regular files, and files on pseudo file systems (procfs, sysfs), whose
    /// reported sizes are not their contents' (`/proc/cpuinfo` says 0; sysfs says 4096).
    pub fn sized_len(&self, method: &'static str) -> Result<u64> {
        if self.kind != FileKind::Regular {
            return Err(Error::NotRegularFile {
                kind: self.kind.describe(),
                method,
            });
        }
        if self.on_pseudo_fs() || (self.len == 0 && self.has_content_at(0)) {
            return Err(Error::SizeUnknown { method });
        }
        Ok(self.len - self.start)
    }

    /// `count` buffers of `size` bytes cut to what this input needs: a sized file smaller
    /// than them gets fewer (and, alone, smaller) buffers of at least a page, so a method
    /// run over a thousand small files does not allocate and fault in a megabyte for each.
    /// Reading still goes on to end of file: only the buffers shrink.
    pub fn fit_buffers(&self, size: usize, count: usize) -> (usize, usize) {
        const PAGE: usize = 4096;
        let Ok(len) = self.sized_len("auto") else {
            return (size, count);
        };
        let need = usize::try_from(len).unwrap_or(usize::MAX).max(PAGE);
        let size = size.min(need.next_multiple_of(PAGE)).max(1);
        (size, count.min(need.div_ceil(size)).max(1))
    }

    /// Whether the size fits the content: a regular file on a real file system.
    pub fn is_sized(&self) -> bool {
        self.sized_len("auto").is_ok()
    }

    fn has_content_at(&self, offset: u64) -> bool {
        let mut byte = [0u8; 1];
        matches!(self.file.read_at(&mut byte, offset), Ok(1))
    }

    fn on_pseudo_fs(&self) -> bool {
        const PROC_SUPER_MAGIC: i64 = 0x9fa0;
        const SYSFS_MAGIC: i64 = 0x6265_6572;
        const DEBUGFS_MAGIC: i64 = 0x6462_6720;
        const CGROUP2_MAGIC: i64 = 0x6367_7270;
        let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
        // SAFETY: `fd` is open for the lifetime of `self`, and `st` points to writable
        // memory of the size `fstatfs` fills.
        let rc = unsafe { libc::fstatfs(self.fd(), st.as_mut_ptr()) };
        if rc != 0 {
            return false;
        }
        // SAFETY: `fstatfs` returned 0, so it initialised `st`.
        let st = unsafe { st.assume_init() };
        #[allow(clippy::unnecessary_cast)] // f_type's type differs between architectures
        let magic = st.f_type as i64;
        matches!(
            magic,
            PROC_SUPER_MAGIC | SYSFS_MAGIC | DEBUGFS_MAGIC | CGROUP2_MAGIC
        )
    }
}

#[cfg(test)]
mod tests {
    use super::Input;

    #[test]
    fn buffers_fit_a_small_file_and_stay_whole_for_a_big_or_unsized_one() {
        let dir = iolab_testkit::scratch();
        let path = dir.path().join("f");
        for (len, want) in [
            (0, (4096, 1)),
            (100, (4096, 1)),
            (16 << 10, (16 << 10, 1)),
            (200 << 10, (64 << 10, 4)),
            (4 << 20, (64 << 10, 16)),
        ] {
            std::fs::write(&path, vec![b'x'; len]).unwrap();
            let input = Input::open(&path).unwrap();
            assert_eq!(input.fit_buffers(64 << 10, 16), want, "{len}");
        }
        // A pipe's size is unknown: the buffers stay as asked.
        let (r, _w) = std::io::pipe().unwrap();
        let input = Input::from_file(std::fs::File::from(std::os::fd::OwnedFd::from(r))).unwrap();
        assert_eq!(input.fit_buffers(64 << 10, 16), (64 << 10, 16));
    }
}
