#!/usr/bin/env bash
# Checks on a machine with an accelerator: the GPU/TPU path of the batched kernels (a batch axis
# instead of the CPU's loop, see ste_jax/ops/_batching.py), then the bootstrap and operator
# benchmarks, then the sharded cover and bootstrap of benchmarks/distributed.py on the machine's own
# devices (one process, a mesh over all local GPUs). Uses the machine's own Python, which must already have jax with the accelerator
# plugin, flax, optax, chex, pandas, scipy, networkx, hypothesis and pytest.
#
#   OUT=/some/dir bash benchmarks/accelerator.sh      # results in $OUT (default benchmarks/out/accelerator)
#
# Each step has its own time limit, so that a slow step still leaves the others' results.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-benchmarks/out/accelerator}
PY=${PYTHON:-python3}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
{ nvidia-smi -L 2>/dev/null; $PY -c "import jax; print('jax', jax.__version__, jax.devices())"; } 2>&1 | tee "$OUT/env.txt"
echo "== bootstrap benchmark"
timeout "${BOOTSTRAP_S:-200}" $PY benchmarks/bootstrap.py --batch-sizes 1 100 0 2>&1 | tee "$OUT/bootstrap.md"
echo "== tests of the batch-axis path and the bootstrap"
timeout "${TESTS_S:-150}" $PY -m pytest -q -x -p no:cacheprovider -W default::DeprecationWarning \
  tests/ops/test_batching.py tests/stats/test_bootstrap.py 2>&1 | tee "$OUT/tests.txt"
echo "== operators benchmark"
timeout "${OPERATORS_S:-120}" $PY benchmarks/operators.py --sizes ${SIZES:-100 1000} 2>&1 | tee "$OUT/operators.md"
echo "== sharded cover and bootstrap (benchmarks/distributed.py, local devices)"
timeout "${DISTRIBUTED_S:-300}" $PY benchmarks/distributed.py --platform native \
  --n "${DISTRIBUTED_N:-1000}" --agents 100 --m 100000 --replicas 256 2>&1 | tee "$OUT/distributed.md"
