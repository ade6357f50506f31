"""The arrays of a saved graph: one .npz file, written by numpy, read defensively.

Reading never unpickles (`allow_pickle=False`) and checks every member before
allocating anything: its .npy header must declare a supported dtype and a shape
whose byte size is what the member really holds, and the whole archive must stay
under a size limit, so a damaged or hostile file gets a `LoadError`, not a
MemoryError or a half-read array.
"""
import zipfile

import numpy as np

from .. import dtypes
from .errors import LoadError

__all__ = ["write_arrays", "read_arrays", "MAX_BYTES"]

MAX_BYTES = 1 << 32          # 4 GiB of array data, uncompressed


def write_arrays(path, arrays):
    """Write {key: ndarray} to `path` (compressed .npz)."""
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)


def read_arrays(path, max_bytes=MAX_BYTES):
    """{key: ndarray} from a .npz written by `write_arrays`; LoadError on anything odd."""
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise LoadError(f"{path}: the arrays file is missing") from None
    except (zipfile.BadZipFile, OSError) as e:
        raise LoadError(f"{path}: not a readable .npz archive ({e})") from None
    arrays, total = {}, 0
    with archive:
        for info in archive.infolist():
            where = f"{path}: member {info.filename!r}"
            if not info.filename.endswith(".npy"):
                raise LoadError(f"{where} is not a .npy array")
            total += info.file_size
            if total > max_bytes:
                raise LoadError(f"{where}: the arrays add up to more than {max_bytes} bytes "
                                f"(limit max_bytes)")
            try:
                with archive.open(info) as f:
                    arrays[info.filename[:-4]] = _read_member(f, info.file_size, where)
            except LoadError:
                raise
            except (zipfile.BadZipFile, OSError, EOFError, ValueError) as e:
                raise LoadError(f"{where} is damaged ({e})") from None
    return arrays


def _read_member(f, size, where):
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
    elif version in ((2, 0), (3, 0)):
        shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        raise LoadError(f"{where}: unsupported .npy version {version}")
    if dtype.hasobject or dtype.kind not in "biufc":
        raise LoadError(f"{where}: dtype {dtype} is not a tensor dtype (object arrays, "
                        f"strings and pickles are never loaded)")
    try:
        dtypes.as_dtype(dtype)
    except TypeError:
        raise LoadError(f"{where}: dtype {dtype} is not supported") from None
    if any(d < 0 for d in shape):
        raise LoadError(f"{where}: negative dimension in shape {list(shape)}")
    count = 1
    for d in shape:
        count *= d
    header = f.tell()
    if count * dtype.itemsize != size - header:
        raise LoadError(f"{where}: its header declares shape {list(shape)} of {dtype} "
                        f"({count * dtype.itemsize} bytes) but it holds {size - header} bytes")
    data = f.read(size - header)
    if len(data) != size - header:
        raise LoadError(f"{where} is truncated")
    array = np.frombuffer(data, dtype=dtype, count=count)
    array = array.reshape(shape[::-1]).transpose() if fortran else array.reshape(shape)
    return np.array(array, copy=True)        # writable, owned, C-ordered
