"""The conformance tests' measure of error (docs/testing.md, "Tolerances").

Every element of an output is compared with the reference relative to its own
magnitude, floored at the reference's root mean square, so that values near
zero by cancellation do not demand more than f32 sums can give:

    ratio_i = |out_i - ref_i| / max(|ref_i|, rms(ref))

A test bounds the largest ratio at about ten times what was measured on the
machines seen so far, and states the measurement beside the bound.
"""
import numpy as np


def relative_errors(out, ref):
    """The ratio of every element (float64 arrays of one shape)."""
    rms = np.sqrt(np.mean(ref * ref))
    return np.abs(out - ref) / np.maximum(np.abs(ref), rms)
