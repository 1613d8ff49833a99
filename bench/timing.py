"""What the benchmarks share: the median time of a call."""
import time


def median_ms(fn, repeat, warmup=3):
    """The median wall time of `repeat` calls of `fn`, in ms, after `warmup` calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]
