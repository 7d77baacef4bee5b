"""The timing the cupy scripts of bench/ share: launches back to back between two CUDA events,
the median of several batches, and the 256 MiB device-to-device copy every % is taken against."""
import cupy as cp
import numpy as np

_e0, _e1 = cp.cuda.Event(), cp.cuda.Event()


def timeit(fn, reps=20, batches=7):
    """Median time of one call of fn(r), in us: `batches` batches of `reps` calls (r = 0, 1, ...,
    for rotating inputs), after one warm-up call."""
    fn(0)
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(batches):
        _e0.record()
        for r in range(reps):
            fn(r)
        _e1.record()
        _e1.synchronize()
        ts.append(cp.cuda.get_elapsed_time(_e0, _e1) * 1e3 / reps)
    return float(np.median(ts))


def copy_reference(nbytes=256 << 20):
    """(us, GB/s) of a device-to-device copy of nbytes, counting the bytes read and written."""
    a, b = cp.empty(nbytes, dtype=cp.uint8), cp.empty(nbytes, dtype=cp.uint8)
    t = timeit(lambda r: cp.cuda.runtime.memcpyAsync(b.data.ptr, a.data.ptr, nbytes, 3, 0))
    del a, b
    return t, 2 * nbytes / (t * 1e-6) / 1e9
