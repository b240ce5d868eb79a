"""Tuning constants: sizes and thresholds that were chosen by measurement.

Each constant changes speed only, never a result, except where its comment says otherwise (the
replicas' key chunks; the default cost limits, which decide what a report computes by default).
Each names the benchmark script that measures it; the current figures are in
``benchmarks/RESULTS.md``. The modules that use a constant bind it to a private module-level name
(e.g. ``ste_jax.ops._cover_kernels._TILE_ELEMENTS``) that they read when a function is traced or
called, so tests and benchmarks can patch it there.
"""

# --- The soft cover's tiled kernels (ste_jax/ops/_cover_kernels.py) ---

# Elements of one ``(c rows, a rows, n witnesses)`` tile of the value kernel (1 MB in float32).
# Provenance: benchmarks/cover_tiles.py (value budget), benchmarks/operators.py.
COVER_TILE_ELEMENTS = 1 << 18

# Elements of one ``(n witnesses, a rows)`` tile of the reverse kernel (1 MB in float32).
# Provenance: benchmarks/cover_tiles.py --budgets (larger budgets gave no consistent gain).
COVER_BACKWARD_TILE_ELEMENTS = 1 << 18

# --- The exact max-min closure (ste_jax/ops/_maxmin.py) ---

# Backends on which ``closure_algorithm("auto")`` runs Floyd--Warshall at every size.
# Provenance: benchmarks/closure_squaring.py.
FLOYD_WARSHALL_PLATFORMS = ("cpu",)

# Largest ``n`` for which ``closure_algorithm("auto")`` squares on the other backends.
# Provenance: benchmarks/closure_squaring.py (run on a GPU).
SQUARING_MAX_N = 1024

# From this ``n`` on, Floyd--Warshall applies several pivots per pass over the matrix.
# Provenance: benchmarks/closure_edges.py, benchmarks/operators.py.
SWEEP_MIN_N = 128

# Pivots per Floyd--Warshall sweep from ``SWEEP_MIN_N`` on.
# Provenance: benchmarks/closure_edges.py --pivots 8 16 32.
PIVOTS_PER_SWEEP = 8

# From this ``n`` on, the bottleneck edges' key comparisons are one select on a compound predicate
# instead of minima and selects per component. Provenance: benchmarks/closure_edges.py.
SELECT_KEYS_MIN_N = 640

# --- Batches of single-tournament kernels (ste_jax/ops/_batching.py) ---

# Backends on which ``batching_mode("auto")`` runs a batch as a loop over items (``lax.map``);
# the other backends use a batch axis. Provenance: benchmarks/operators.py --batch B N.
BATCH_LOOP_PLATFORMS = ("cpu",)

# --- Bootstrap replicas (ste_jax/evaluate/_replicas.py) ---

# Replicas drawn from one key and compiled as one ``lax.map``; replica ``r`` uses the key
# ``jax.random.split(key, num_chunks)[r // REPLICA_CHUNK]``, so changing it changes the draws (not
# their distribution). Provenance: benchmarks/bootstrap.py.
REPLICA_CHUNK = 25

# Replicas per compiled step of ``batch_size="auto"`` on the CPU: a batch is no faster per replica
# there and compiles more slowly. Provenance: benchmarks/model_fit.py.
REPLICA_BATCH_CPU = 1

# Replicas per compiled step of ``batch_size="auto"`` on the other backends (a batch axis).
# Provenance: benchmarks/model_fit.py, benchmarks/bootstrap.py (run on a GPU).
REPLICA_BATCH_ACCELERATOR = 8

# --- Default cost limits of the reports: what is computed by default, never a computed value ---

# Largest ``n`` whose soft scores get bootstrap intervals by default (the soft cover costs
# ``O(n^3)`` exponentials per replica). Provenance: benchmarks/operators.py.
SOFT_INTERVALS_MAX_AGENTS = 300

# Largest ``n`` for which ``ste-jax explain`` shows maximal-lottery witnesses (an ``O(n^3)``
# interior-point solve per step). Provenance: benchmarks/solutions.py.
LOTTERY_WITNESS_MAX_AGENTS = 1000

# --- Loading files (ste_jax/data/_tabular.py) ---

# Most lines of a block that the CSV fast path checks one by one for a repeated header (those with
# the header's longest name in its column); above it, the parsed column is checked instead.
# Provenance: benchmarks/loading.py.
REPEATED_HEADER_SCAN = 10_000

# Runs of PGN tag lines (games) whose tags are converted together (bounds the tuples alive at once).
# Provenance: benchmarks/loading.py (pgn rows).
PGN_RUNS_PER_CHUNK = 1 << 15

# Rows per batch when the arena/simple loaders read a Parquet file in batches, and lines (records,
# in a quoted file) per block of a CSV file, which is always streamed (the memory held is that of
# one batch, one int per row and the distinct rows; never a result).
# Provenance: benchmarks/cli.py --comparisons 20000000.
LOAD_BATCH_ROWS = 1_000_000
