"""The arrays of a saved graph: one .npz file, written by numpy, read defensively.

Reading never unpickles and checks everything before allocating: the archive's
directory must be of a size its arrays could need, each member must be a plain
(stored or deflated, unencrypted) .npy whose header declares a supported dtype and a
shape whose byte size is what the member declares to hold, and the members' declared
sizes must add up to at most `max_bytes`. Each member is then streamed, chunk by
chunk, into the array that holds it: the decompressor never produces more than the
declared size (so a zip bomb gets a `LoadError`, not a MemoryError), a member holding
less is truncated, and its CRC is checked. The arrays' `digest` is recorded in the
graph description, so a description and an arrays file from different saves are refused.
"""
import hashlib
import struct
import zipfile
import zlib

import numpy as np

from .. import dtypes
from .errors import LoadError

__all__ = ["write_arrays", "read_arrays", "digest", "MAX_BYTES"]

MAX_BYTES = 1 << 30          # 1 GiB of array data, uncompressed (`load(..., max_bytes=)`)
_CHUNK = 1 << 20
_METHODS = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED)
# What zipfile and numpy's .npy header parser raise on a damaged archive or member.
_DAMAGED = (zipfile.BadZipFile, zlib.error, struct.error, OSError, EOFError, ValueError,
            TypeError, SyntaxError, OverflowError, NotImplementedError)


def write_arrays(f, arrays):
    """Write {key: ndarray} to the binary file `f` (a compressed .npz)."""
    np.savez_compressed(f, **arrays)


def digest(arrays):
    """The SHA-256 of {key: ndarray}: keys, dtypes, shapes and values (little-endian)."""
    h = hashlib.sha256()
    for key in sorted(arrays):
        a = np.asarray(arrays[key])
        little = a.dtype.newbyteorder("<")
        h.update(f"{len(key)}:{key}{little.str}{a.shape}".encode())
        h.update(np.asarray(a.reshape(-1), dtype=little).view(np.uint8))
    return h.hexdigest()


def read_arrays(f, where, max_bytes=MAX_BYTES):
    """{key: ndarray} from the .npz in the seekable binary file `f` (named `where` in errors),
    written by `write_arrays`; LoadError on anything odd."""
    _check_directory(f, where, max_bytes)
    try:
        archive = zipfile.ZipFile(f)
    except _DAMAGED as e:
        raise LoadError(f"{where}: not a readable .npz archive ({e})") from None
    arrays, total = {}, 0
    with archive:
        for info in archive.infolist():
            member = f"{where}: member {info.filename!r}"[:300]
            key = _member_key(info, arrays, member)
            total += info.file_size
            if total > max_bytes:
                raise LoadError(f"{member}: the arrays add up to more than {max_bytes} bytes "
                                f"(limit max_bytes)")
            try:
                with archive.open(info) as m:
                    arrays[key] = _read_member(m, info.file_size, member)
            except LoadError:
                raise
            except _DAMAGED as e:
                raise LoadError(f"{member} is damaged ({e})"[:500]) from None
    return arrays


def _check_directory(f, where, max_bytes):
    """Refuse an archive whose directory (the list of members zipfile reads in full before
    anything else) is larger than `max_bytes` worth of arrays could need."""
    try:
        end = zipfile._EndRecData(f)       # the end record zipfile itself goes by
    except _DAMAGED as e:
        raise LoadError(f"{where}: not a readable .npz archive ({e})") from None
    if end is None:
        raise LoadError(f"{where}: not a readable .npz archive (no zip end record)")
    limit = max(1 << 20, max_bytes // 128)
    if end[zipfile._ECD_SIZE] > limit:
        raise LoadError(f"{where}: its list of members takes {end[zipfile._ECD_SIZE]} bytes, "
                        f"more than {limit} (the most max_bytes={max_bytes} of arrays need)")


def _member_key(info, arrays, member):
    if not info.filename.endswith(".npy"):
        raise LoadError(f"{member} is not a .npy array")
    if info.flag_bits & 0x1:
        raise LoadError(f"{member} is encrypted")
    if info.compress_type not in _METHODS:
        raise LoadError(f"{member} is compressed with method {info.compress_type} (numpy "
                        f"stores or deflates)")
    key = info.filename[:-4]
    if key in arrays:
        raise LoadError(f"{member} appears twice")
    return key


def _read_header(f, where):
    """(shape, fortran order, dtype) from the .npy header at the start of member `f`."""
    try:
        version = np.lib.format.read_magic(f)
        if version == (1, 0):
            return np.lib.format.read_array_header_1_0(f)
        if version in ((2, 0), (3, 0)):
            return np.lib.format.read_array_header_2_0(f)
    except (zipfile.BadZipFile, zlib.error, OSError):
        raise
    except Exception as e:  # noqa: BLE001 - numpy's header parser (tokenize, literal_eval)
        raise LoadError(f"{where} is damaged: its .npy header does not parse ({e})"[:500]) \
            from None
    raise LoadError(f"{where}: unsupported .npy version {version}")


def _read_member(f, size, where):
    shape, fortran, dtype = _read_header(f, where)
    if dtype.hasobject or dtype.kind not in "biufc" or dtype.fields is not None \
            or dtype.subdtype is not None:
        raise LoadError(f"{where}: dtype {dtype} is not a tensor dtype (object arrays, "
                        f"strings and pickles are never loaded)")
    try:
        dtypes.as_dtype(dtype)
    except (TypeError, ValueError):
        raise LoadError(f"{where}: dtype {dtype} is not supported") from None
    if any(d < 0 for d in shape):
        raise LoadError(f"{where}: negative dimension in shape {list(shape)}")
    count = 1
    for d in shape:
        count *= d
    data_bytes = size - f.tell()
    if count * dtype.itemsize != data_bytes:
        raise LoadError(f"{where}: its header declares shape {list(shape)} of {dtype} "
                        f"({count * dtype.itemsize} bytes) but it holds {data_bytes} bytes")
    array = np.empty(count, dtype)
    _fill(f, array.view(np.uint8), where)
    if not dtype.isnative:
        array = array.byteswap(inplace=True).view(dtype.newbyteorder("="))
    if fortran:
        return np.ascontiguousarray(array.reshape(shape[::-1]).transpose())
    return array.reshape(shape)


def _fill(f, buffer, where):
    """Read exactly len(buffer) bytes of member `f` into `buffer`, a chunk at a time."""
    filled = 0
    while filled < len(buffer):
        n = f.readinto(memoryview(buffer[filled:filled + _CHUNK]))
        if not n:
            raise LoadError(f"{where} is truncated")
        filled += n
    if f.read(1):
        raise LoadError(f"{where} holds more than its header declares")
