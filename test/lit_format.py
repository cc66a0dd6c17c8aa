# -*- Python -*-
"""The lit test format of the tfc suite (test/lit.cfg.py).

A module of its own because lit pickles the format for its worker processes.
"""

import glob
import os
import shutil

import lit.formats
import lit.TestRunner


class ShTestThatCleansUp(lit.formats.ShTest):
    """ShTest that deletes a passing test's %t files afterwards.

    The end-to-end tests write full-size weights and libraries (up to 0.9 GB
    a test, 9 GB for the suite, as much again in each sanitizer build); kept,
    they fill a CI machine's disk. A test that fails keeps its files for
    whoever debugs it, and TFC_LIT_KEEP_OUTPUT=1 keeps every test's.
    """

    def execute(self, test, litConfig):
        result = super().execute(test, litConfig)
        if result.code.isFailure or os.environ.get("TFC_LIT_KEEP_OUTPUT", "0") != "0":
            return result
        _, tmp_base = lit.TestRunner.getTempPaths(test)
        for path in glob.glob(glob.escape(tmp_base) + ".tmp*"):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.remove(path)
                except OSError:
                    pass
        return result
