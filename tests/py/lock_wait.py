import sqlite3, sys, time, subprocess, os
store = sys.argv[1]; cmd = sys.argv[2:]
c = sqlite3.connect(store, isolation_level=None, timeout=120)
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
waits = []
while p.poll() is None:
    t0 = time.monotonic()
    try:
        c.execute('BEGIN IMMEDIATE'); c.execute('ROLLBACK')
    except Exception as e:
        print('probe error', e)
    waits.append(time.monotonic() - t0)
    time.sleep(0.02)
err = p.stderr.read().decode()[-300:]
t = sorted(waits)
print(f"exit {p.returncode}; probes {len(t)}; max wait {t[-1]*1000:.0f} ms; p99 {t[int(len(t)*0.99)-1]*1000:.0f} ms; median {t[len(t)//2]*1000:.1f} ms")
if p.returncode: print(err)
