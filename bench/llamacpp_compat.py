"""Imported before llama_cpp's Llama is used by the llama.cpp peers of
bench/ and scripts/: on a CPU with AMX, llama-cpp-python 0.3.36 (built with
GGML_NATIVE) crashes in ggml_backend_amx_mul_mat (seen on the 2-core Xeon
"family 6 model 167" VMs, every model and format), so there the model is
loaded without llama.cpp's extra buffer types (use_extra_bufts = false:
its AMX and repacked-weight paths), and a note says so on stderr. Other
CPUs are left as they are."""
import sys

import llama_cpp
import llama_cpp.llama


def _has_amx():
    try:
        with open("/proc/cpuinfo") as f:
            return " amx_tile" in f.read()
    except OSError:
        return False


EXTRA_BUFTS_OFF = _has_amx()
if EXTRA_BUFTS_OFF:
    _default = llama_cpp.llama_model_default_params

    def _params():
        p = _default()
        p.use_extra_bufts = False
        return p

    llama_cpp.llama_model_default_params = _params
    llama_cpp.llama.llama_cpp.llama_model_default_params = _params
    print("llamacpp_compat: AMX host: llama.cpp runs without its extra buffer "
          "types (AMX, repacked weights)", file=sys.stderr)
