"""gguf-py's GGUFReader opening a file (median of N runs) and the process's peak RSS."""
import resource
import statistics
import sys
import time

import gguf

path, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
times = []
for _ in range(n):
    t = time.perf_counter()
    r = gguf.GGUFReader(path)
    times.append(time.perf_counter() - t)
    del r
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"{'gguf-py ' + gguf.__name__:18} median {statistics.median(times)*1e3:8.2f} ms  min {min(times)*1e3:8.2f} ms  peak RSS {peak:6.1f} MiB")
