"""Runs a command and prints one JSON line of what it cost (for scripts/bench-convert.sh).

Usage: python measure_run.py COMMAND [ARG...]

wall_s: wall time; cpu_s: user + system time of the process and its children, so cpu_s / wall_s
is the average number of cores busy; maxrss_mib: the kernel's peak resident size (ru_maxrss). Both
come from /usr/bin/time (GNU time's %U %S %M) when present, whose small process forks the command;
without it from this script's wait4, which then also counts the pages of this Python process the
child had before its exec (about 10 MiB). /proc/PID/status is sampled every 0.1 s for the largest RssAnon (anonymous memory:
heap, stacks, Python objects), RssFile (file-backed pages: the binary, libraries and memory-mapped
input files), VmRSS (their sum with RssShmem) and Threads; a sample misses peaks shorter than
0.1 s, the kernel's ru_maxrss does not. The command's exit status is this script's.
"""
import json
import os
import subprocess
import sys
import time


def status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "RssAnon", "RssFile", "Threads"):
                    out[k] = int(v.split()[0])
    except (FileNotFoundError, ProcessLookupError, ValueError):
        pass
    return out


def main():
    cmd = sys.argv[1:]
    peak = {"VmRSS": 0, "RssAnon": 0, "RssFile": 0, "Threads": 0}
    gnu_time = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
    if gnu_time:
        rfd, wfd = os.pipe()
        cmd = [gnu_time, "-f", "%U %S %M", "-o", f"/dev/fd/{wfd}"] + cmd
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         pass_fds=(wfd,) if gnu_time else ())
    if gnu_time:
        os.close(wfd)
    stderr_chunks = []
    os.set_blocking(p.stderr.fileno(), False)
    while True:
        pid, st, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        target = p.pid
        if gnu_time:
            try:
                with open(f"/proc/{p.pid}/task/{p.pid}/children", encoding="ascii") as f:
                    kids = f.read().split()
                target = int(kids[0]) if kids else None
            except (FileNotFoundError, ProcessLookupError):
                target = None
        for k, v in (status(target) if target else {}).items():
            peak[k] = max(peak[k], v)
        try:
            chunk = p.stderr.read()
            if chunk:
                stderr_chunks.append(chunk)
        except (BlockingIOError, TypeError):
            pass
        time.sleep(0.1)
    wall = time.monotonic() - start
    rest = p.stderr.read()
    if rest:
        stderr_chunks.append(rest)
    code = os.waitstatus_to_exitcode(st)
    user, sys_, maxrss = ru.ru_utime, ru.ru_stime, ru.ru_maxrss
    if gnu_time:
        with os.fdopen(rfd, encoding="ascii") as f:
            lines = f.read().strip().splitlines()
        if lines and code == 0:
            u, s_, m = lines[-1].split()
            user, sys_, maxrss = float(u), float(s_), int(m)
    if code != 0:
        sys.stderr.buffer.write(b"".join(stderr_chunks)[-4000:])
    print(json.dumps({
        "wall_s": round(wall, 2), "cpu_s": round(user + sys_, 2),
        "user_s": round(user, 2), "sys_s": round(sys_, 2), "maxrss_mib": round(maxrss / 1024, 1),
        "rss_anon_mib": round(peak["RssAnon"] / 1024, 1), "rss_file_mib": round(peak["RssFile"] / 1024, 1),
        "vmrss_sampled_mib": round(peak["VmRSS"] / 1024, 1), "threads": peak["Threads"], "exit": code,
    }))
    sys.exit(code)


if __name__ == "__main__":
    main()
