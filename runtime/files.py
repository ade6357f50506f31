"""Files the runtime writes whole, replaced atomically; files it reads, opened defensively.

Writing (saved graphs, ONNX models, rendered graphs):

    with replace_files("m/arrays.npz", "m/graph.json") as (arrays, graph):
        arrays.write(...)                  # temporary siblings of the two paths
        graph.write(...)
    write_file("f.onnx", data)             # one file, bytes or text

The block writes into new temporary files beside the targets. When it ends without an
error, each is flushed and fsynced, then renamed over its target in order (a rename is
atomic: a reader sees the old file or the new one, never a part) and the directory is
fsynced. If anything fails first (disk full, a file-size limit, an exception in the
block), the temporaries are removed and the targets are untouched; if a rename fails
part-way (an immutable target), the targets already renamed get their old files back.
A target that is a symbolic link is replaced itself (the file it points to is left alone).

Reading (saved graphs): `open_regular(path)` opens a regular file only, never following
a symbolic link and never blocking on a FIFO (the kind of file is checked on the opened
descriptor, so nothing can swap it in between), and `read_limited(f, limit)` reads at
most `limit` bytes, whatever the file's size claims.
"""
import contextlib
import errno
import os
import secrets
import stat

__all__ = ["replace_files", "write_file", "open_regular", "read_limited", "UnsafeFileError",
           "FileTooLargeError"]

_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
_WRITE_FLAGS = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
                | getattr(os, "O_BINARY", 0))
_CHUNK = 1 << 20


class UnsafeFileError(OSError):
    """A path to read is a symbolic link, a FIFO, a device or a directory."""


class FileTooLargeError(OSError):
    """A file to read holds more bytes than its reader accepts."""


# -- writing ---------------------------------------------------------------------------------

@contextlib.contextmanager
def replace_files(*paths):
    """Binary files to write, one per path, that replace the paths together on success."""
    pending = []            # (open file, its temporary name, target)
    try:
        for path in paths:
            pending.append(_create_sibling(path) + (path,))
        yield tuple(f for f, _, _ in pending)
        for f, _, _ in pending:
            f.flush()
            os.fsync(f.fileno())
            f.close()
        _rename_all([(temporary, path) for _, temporary, path in pending])
    finally:
        for f, temporary, _ in pending:
            f.close()
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)


def write_file(path, data):
    """Replace `path` atomically by `data` (bytes, or str written as UTF-8)."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    with replace_files(path) as (f,):
        f.write(data)


def _create_sibling(path):
    """(open file, name) of a new file beside `path`, with the mode of the file it will
    replace (a new path: 0o666 less the umask, as `open` makes it)."""
    directory, base = os.path.split(os.path.abspath(path))
    while True:
        name = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(name, _WRITE_FLAGS, 0o666)
            break
        except FileExistsError:
            continue
    try:
        if hasattr(os, "fchmod"):
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(fd, stat.S_IMODE(os.stat(path).st_mode))
        return os.fdopen(fd, "w+b"), name
    except BaseException:
        os.close(fd)
        os.unlink(name)
        raise


def _rename_all(moves):
    """Rename each (temporary, target); if one fails, restore the targets renamed before."""
    backups, done = {}, []
    try:
        if len(moves) > 1:
            for _, target in moves:
                backups[target] = _link_backup(target)
        for temporary, target in moves:
            os.replace(temporary, target)
            done.append(target)
    except BaseException:
        for target in reversed(done):
            with contextlib.suppress(OSError):
                if backups.get(target):
                    os.replace(backups.pop(target), target)
                else:
                    os.unlink(target)
        raise
    finally:
        for backup in backups.values():
            if backup:
                with contextlib.suppress(OSError):
                    os.unlink(backup)
    for directory in {os.path.dirname(os.path.abspath(t)) for _, t in moves}:
        _fsync_directory(directory)


def _link_backup(target):
    """A second name for the file at `target` (to put back), or None if there is none."""
    directory, base = os.path.split(os.path.abspath(target))
    backup = os.path.join(directory, f".{base}.{secrets.token_hex(4)}.old")
    try:
        os.link(target, backup, follow_symlinks=False)
    except OSError:         # no file yet, no hard links here, or an immutable target (whose
        return None         # own rename fails, so it never needs restoring)
    return backup


def _fsync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return              # a platform (Windows) where directories cannot be opened
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# -- reading ---------------------------------------------------------------------------------

def open_regular(path):
    """`path` open for binary reading, if it is a regular file (else UnsafeFileError)."""
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as e:
        if e.errno == errno.ELOOP and os.path.islink(path):
            raise UnsafeFileError(e.errno, "a symbolic link, which is never followed",
                                  path) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFileError(errno.EINVAL, f"{_kind(mode)}, not a regular file", path)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_limited(f, limit):
    """The rest of binary file `f`, if it holds at most `limit` bytes (else FileTooLargeError);
    reads at most `limit` + 1 bytes and allocates as it reads."""
    name = getattr(f, "name", None)
    name = name if isinstance(name, str) else None
    if hasattr(f, "fileno") and os.fstat(f.fileno()).st_size - f.tell() > limit:
        raise FileTooLargeError(errno.EFBIG, f"more than {limit} bytes", name)
    chunks, total = [], 0
    while True:
        chunk = f.read(min(_CHUNK, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise FileTooLargeError(errno.EFBIG, f"more than {limit} bytes", name)


def _kind(mode):
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return kind
    return "not a regular file"
