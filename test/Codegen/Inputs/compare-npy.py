"""compare-npy.py TOL A1 B1 [A2 B2 ...]: the metric of attn-run --check,
max |A - B| over all pairs / max |A| over all A; exits 1 if it exceeds TOL.
Entries equal in both (the +inf lse of an empty row) count as no
difference."""
import sys

import numpy as np

tol = float(sys.argv[1])
files = sys.argv[2:]
diff, scale = 0.0, 0.0
for a_path, b_path in zip(files[0::2], files[1::2]):
    a = np.load(a_path).astype(np.float64)
    b = np.load(b_path).astype(np.float64)
    assert a.shape == b.shape, (a_path, a.shape, b_path, b.shape)
    diff = max(diff, np.where(a == b, 0.0, np.abs(a - b)).max())
    scale = max(scale, np.abs(np.where(np.isfinite(a), a, 0.0)).max())
worst = diff / max(scale, 1e-30)
print("compare: max rel err = %.3e" % worst)
sys.exit(0 if worst <= tol else 1)
