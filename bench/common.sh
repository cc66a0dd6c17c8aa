# Shared by bench/run.sh and bench/ab-gemm.sh (sourced; needs $root and
# $build set).

# "MODEL NAME (family F, model M)" of this host, from lscpu.
host_cpu() {
  echo "$(lscpu | sed -n 's/^Model name: *//p') (family $(lscpu | sed -n 's/^CPU family: *//p'), model $(lscpu | sed -n 's/^Model: *//p'))"
}

# Builds bench/gemm_bench.cpp into $1 against the build's runtime, oneDNN
# and OpenBLAS.
build_gemm_bench() {
  clang++-22 -O2 -std=c++17 -I"$root/include" "$root/bench/gemm_bench.cpp" \
    -L"$build/lib" -Wl,-rpath,"$build/lib" -ltfcrt -ldnnl -lopenblas -lpthread \
    -o "$1"
}
