"""Multi-process runs (``jax.distributed``) of the sharded soft cover and the sharded bootstrap.

One program, several processes: each process is started with its own devices (simulated CPU
devices here, ``--xla_force_host_platform_device_count``; its GPUs on a cluster), calls
``jax.distributed.initialize`` with the coordinator's address, and builds one global
``jax.sharding.Mesh`` over the devices of all processes (``jax.devices()``). Every process runs the
same code on the same inputs (``D``, the comparisons and the key are built from the same seed on
each process: they are replicated), and JAX's collectives (gloo on CPUs, NCCL on GPUs) connect
them. The outputs are global arrays; ``multihost_utils.process_allgather`` brings them to every
host.

This file is three things:

* a **launcher** (:func:`launch`): starts ``processes`` copies of the worker on localhost, each in
  its own process group, waits with a time limit and kills the groups that are left (tests use it);
* the **worker** (``python benchmarks/distributed.py worker ...``): initializes ``jax.distributed``
  (when there are several processes), runs a task on the global mesh and prints one JSON line;
* the **benchmark** (default): strong scaling of the sharded cover (forward and reverse mode) and
  of the bootstrap over 1, 2 and 4 simulated devices in one process and 2 processes, each result
  compared with the one-device run; XLA's compiled memory per device of the sharded cover at
  ``--memory-n`` (compiled, not run); and a whole ``leaderboard(..., mesh=...)`` of the model
  estimator (its parametric replicas over the mesh) on 1 device, 4 devices and 2 x 2, its
  bootstrap columns compared with the 1-device table.

Usage:
  python benchmarks/distributed.py                      # n=160 cover, 64 replicas at n=40
  python benchmarks/distributed.py --quick              # small sizes, to check that it runs
  python benchmarks/distributed.py --parts leaderboard  # only the leaderboard table
  python benchmarks/distributed.py --platform native    # one process, all local accelerators
  python benchmarks/distributed.py worker --process-id 0 --processes 2 \
    --coordinator 10.0.0.1:1234 --task '{"kind": "check", "n": 13}'   # one worker by hand

On a cluster, start one worker per host (or per GPU) with the same ``--coordinator`` (process 0's
host and a free port) and ``--processes``, and each its own ``--process-id``; see
``docs/guides/distributed.md``.
"""

import argparse
import json
import os
import pathlib
import signal
import socket
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]

# --------------------------------------------------------------------------------------------
# The launcher


def free_port() -> int:
  """A TCP port free on localhost now (the coordinator binds it a moment later)."""
  with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    return s.getsockname()[1]


def launch(task: dict, *, processes: int, local_devices: int, timeout: float = 300.0) -> list:
  """Runs ``task`` in ``processes`` worker processes of ``local_devices`` CPU devices each.

  Each worker is a fresh ``python benchmarks/distributed.py worker`` in its own session (process
  group), with ``JAX_PLATFORMS=cpu`` and ``local_devices`` simulated devices; with several
  processes they meet at a coordinator on a free localhost port. The call returns when every
  worker has exited, or raises when one fails or ``timeout`` seconds have passed; in every case the
  process groups still alive are killed before it returns.

  Args:
    task: the worker's task (JSON-able dict, see :func:`run_task`).
    processes: number of processes (``1``: no ``jax.distributed``).
    local_devices: simulated CPU devices per process.
    timeout: seconds for the whole run.

  Returns:
    The JSON value each worker printed on its last stdout line, in process order.

  Raises:
    RuntimeError: a worker exited non-zero (its stderr's tail in the message).
    TimeoutError: the run did not end within ``timeout`` seconds.
  """
  flags = (
    f"{os.environ.get('XLA_FLAGS', '')} --xla_force_host_platform_device_count={local_devices}"
  )
  env = dict(os.environ, XLA_FLAGS=flags.strip(), JAX_PLATFORMS="cpu", PYTHONUNBUFFERED="1")
  coordinator = f"127.0.0.1:{free_port()}"
  procs = []
  try:
    for i in range(processes):
      cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "worker"]
      cmd += ["--process-id", str(i), "--processes", str(processes)]
      cmd += ["--coordinator", coordinator, "--task", json.dumps(task)]
      procs.append(
        subprocess.Popen(
          cmd,
          cwd=ROOT,
          env=env,
          stdout=subprocess.PIPE,
          stderr=subprocess.PIPE,
          text=True,
          start_new_session=True,
        )
      )
    deadline = time.monotonic() + timeout
    outputs = []
    for i, p in enumerate(procs):
      try:
        out, err = p.communicate(timeout=max(deadline - time.monotonic(), 0.1))
      except subprocess.TimeoutExpired:
        raise TimeoutError(f"worker {i} of {processes} still running after {timeout} s") from None
      if p.returncode != 0:
        raise RuntimeError(f"worker {i} of {processes} exited {p.returncode}:\n{err[-3000:]}")
      outputs.append(json.loads(out.strip().splitlines()[-1]))
    return outputs
  finally:
    for p in procs:
      if p.poll() is None:
        try:
          os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
          pass
      p.wait()
      for stream in (p.stdout, p.stderr):
        if stream is not None:
          stream.close()


# --------------------------------------------------------------------------------------------
# The worker


def _inputs(n: int, seed: int):
  """``D`` ``(n, n)`` and the loss weights ``W``, the same on every process (float32)."""
  import numpy as np

  rng = np.random.default_rng(seed)
  return (
    rng.uniform(size=(n, n)).astype(np.float32),
    rng.normal(size=(n, n)).astype(np.float32),
  )


def _comparisons(agents: int, m: int, seed: int):
  """``m`` comparisons among ``agents`` agents with a planted order, the same on every process."""
  import numpy as np

  from ste_jax.data import Comparisons

  rng = np.random.default_rng(seed)
  a = rng.integers(0, agents, size=m)
  b = (a + 1 + rng.integers(0, agents - 1, size=m)) % agents
  y = (rng.uniform(size=m) < 1.0 / (1.0 + np.exp((a - b) / agents * 4.0))).astype(np.float32)
  return Comparisons.from_arrays(a, b, y)


def _host(x):
  """A global array (replicated or sharded over processes) as a NumPy array on this host."""
  from jax.experimental import multihost_utils
  import numpy as np

  if x.is_fully_addressable:
    return np.asarray(x)
  return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def _timed(fn, *args, reps: int):
  """``(result, best seconds)`` of ``fn(*args)`` after a first (compiling) call."""
  import jax

  out = jax.block_until_ready(fn(*args))
  best = float("inf")
  for _ in range(reps):
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    best = min(best, time.perf_counter() - start)
  return out, best


# The leaderboard's columns a "leaderboard" task returns: those the bootstrap replicas decide.
LEADERBOARD_COLUMNS = (
  "p_tc",
  "p_uc",
  "tc_verdict",
  "uc_verdict",
  "tc_lo",
  "tc_hi",
  "uc_lo",
  "uc_hi",
  "hard_tc",
  "tier",
)


def leaderboard_columns(task: dict, mesh) -> dict:
  """The leaderboard of ``task``'s comparisons with ``mesh`` (or ``None``): JSON-able columns.

  ``task``: ``agents``, ``m``, ``seed`` (the comparisons, :func:`_comparisons`), ``estimator``
  (default ``"model"``), ``resampling`` (default ``"auto"``: parametric for the model),
  ``replicas`` and ``clusters`` (``k``: comparisons ``3i, 3i+1, 3i+2`` ... in clusters of ``k``
  consecutive rows, the cluster bootstrap; default none). Returns :data:`LEADERBOARD_COLUMNS`
  in agent order (floats exact, verdicts as text), the display order and the replicas'
  Top-Cycle candidates.
  """
  import jax
  import numpy as np

  from ste_jax.evaluate import leaderboard

  comparisons = _comparisons(task.get("agents", 12), task.get("m", 600), task.get("seed", 0))
  k = task.get("clusters")
  clusters = None if not k else np.arange(comparisons.num_comparisons) // k
  table = leaderboard(
    jax.random.key(task.get("seed", 0)),
    comparisons,
    task.get("estimator", "model"),
    num_replicas=task.get("replicas", 8),
    resampling=task.get("resampling", "auto"),
    soft_intervals=True,
    clusters=clusters,
    cluster_column="rows" if k else None,
    mesh=mesh,
  ).table()
  out = {c: np.asarray(table.columns[c]).tolist() for c in LEADERBOARD_COLUMNS}
  out["order"] = np.asarray(table.order).tolist()
  out["candidates"] = table.candidate_names("top_cycle")
  return out


def run_task(task: dict) -> dict:
  """Runs one task on a mesh over all (global) devices, axis ``"rows"``; returns a JSON-able dict.

  ``task["kind"]``: ``"check"`` returns (of ``task["parts"]``, default both ``"cover"`` and
  ``"bootstrap"``) the values (``float32`` as Python floats, exact) of the
  sharded cover ``cover`` at ``gamma_c``, the gradient of ``sum(cover * W)`` in ``D``
  (``grad_D``) and ``gamma_c`` (``grad_gamma_c``), and the bootstrap's Top-Cycle and
  Uncovered-Set replicas; ``"bench"`` returns the best times of the same computations
  (``cover_s``, ``cover_grad_s``, ``bootstrap_s``) and their values' checksums; ``"memory"``
  compiles the cover's forward and reverse mode at ``n`` without running them and returns XLA's
  memory per device (arguments, outputs, temporaries, in bytes); ``"leaderboard"`` returns the
  leaderboard's bootstrap columns with the replicas over the mesh (:func:`leaderboard_columns`;
  ``task["mesh"] = False``: on the default device) and, with ``task["reps"]``, the best time of a
  whole leaderboard (``leaderboard_s``).
  """
  import jax
  import jax.numpy as jnp
  from jax.sharding import Mesh
  import numpy as np

  from ste_jax.ops import sharded_cover_scores
  from ste_jax.stats import bootstrap_scores, ste_score_fn

  mesh = Mesh(np.array(jax.devices()), ("rows",))
  info = {"devices": jax.device_count(), "processes": jax.process_count()}
  if task["kind"] == "leaderboard":
    mesh = mesh if task.get("mesh", True) else None
    info |= leaderboard_columns(task, mesh)
    if task.get("reps"):
      best = float("inf")
      for _ in range(task["reps"]):
        start = time.perf_counter()
        leaderboard_columns(task, mesh)
        best = min(best, time.perf_counter() - start)
      info["leaderboard_s"] = best
    return info
  n, gamma_c = task.get("n", 13), task.get("gamma_c", 0.1)
  D, W = _inputs(n, task.get("seed", 0))
  g = np.float32(gamma_c)

  @jax.jit
  def cover(D, g):
    return sharded_cover_scores(D, gamma_c=g, mesh=mesh, axis_name="rows")

  cover_grad = jax.jit(jax.grad(lambda D, g: jnp.sum(cover(D, g) * W), argnums=(0, 1)))
  if task["kind"] == "memory":
    for name, fn in (("forward", cover), ("reverse", cover_grad)):
      m = fn.lower(D, g).compile().memory_analysis()
      info[name] = {
        "argument_bytes": int(m.argument_size_in_bytes),
        "output_bytes": int(m.output_size_in_bytes),
        "temp_bytes": int(m.temp_size_in_bytes),
      }
    return info
  comparisons = _comparisons(task.get("agents", 12), task.get("m", 600), task.get("seed", 0))
  score_fn = ste_score_fn(tau=0.1)
  replicas = task.get("replicas", 8)

  def bootstrap(key):
    return bootstrap_scores(key, comparisons, score_fn, num_replicas=replicas, mesh=mesh)

  if task["kind"] == "check":
    parts = task.get("parts", ["cover", "bootstrap"])
    values = {}
    if "cover" in parts:
      dD, dg = cover_grad(D, g)
      values |= {"cover": _host(cover(D, g)), "grad_D": _host(dD), "grad_gamma_c": _host(dg)}
    if "bootstrap" in parts:
      boot = bootstrap(jax.random.key(task.get("seed", 0)))
      values |= {"top_cycle": _host(boot.top_cycle), "uncovered": _host(boot.uncovered)}
    return info | {k: np.asarray(v, np.float64).tolist() for k, v in values.items()}
  if task["kind"] == "bench":
    reps = task.get("reps", 3)
    C, info["cover_s"] = _timed(cover, D, g, reps=reps)
    (dD, _), info["cover_grad_s"] = _timed(cover_grad, D, g, reps=reps)
    boot, info["bootstrap_s"] = _timed(bootstrap, jax.random.key(0), reps=reps)
    info["cover_sum"] = float(np.sum(_host(C), dtype=np.float64))
    info["grad_sum"] = float(np.sum(np.abs(_host(dD)), dtype=np.float64))
    info["bootstrap_sum"] = float(np.sum(_host(boot.uncovered), dtype=np.float64))
    return info
  raise ValueError(f"unknown task kind {task['kind']!r}")


def worker(args) -> None:
  import jax

  if args.processes > 1:
    if args.platform == "cpu":
      jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
      coordinator_address=args.coordinator,
      num_processes=args.processes,
      process_id=args.process_id,
      initialization_timeout=args.init_timeout,
    )
  sys.path.insert(0, str(ROOT))
  result = run_task(json.loads(args.task))
  print(json.dumps(result | {"process_id": args.process_id}), flush=True)
  if args.processes > 1:
    jax.distributed.shutdown()


# --------------------------------------------------------------------------------------------
# The benchmark

CONFIGS = ((1, 1), (1, 2), (1, 4), (2, 1), (2, 2))  # (processes, devices per process)


def _native_run(task: dict) -> dict:
  """One process on the machine's own devices (an accelerator: no simulated CPU devices)."""
  env = dict(os.environ, PYTHONUNBUFFERED="1")
  cmd = [sys.executable, str(pathlib.Path(__file__).resolve()), "worker", "--platform", "native"]
  cmd += ["--task", json.dumps(task)]
  proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
  if proc.returncode:
    raise RuntimeError(proc.stderr[-3000:])
  return json.loads(proc.stdout.strip().splitlines()[-1])


def _mb(x: int) -> str:
  return f"{x / 2**20:.1f}"


def main(argv=None) -> None:
  parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  parser.add_argument("--n", type=int, default=160, help="agents of the cover (default 160)")
  parser.add_argument("--agents", type=int, default=40, help="agents of the bootstrap")
  parser.add_argument("--m", type=int, default=4000, help="comparisons of the bootstrap")
  parser.add_argument("--replicas", type=int, default=64, help="bootstrap replicas")
  parser.add_argument("--reps", type=int, default=3, help="timed repetitions (best of)")
  parser.add_argument("--memory-n", type=int, default=4000, help="n of the memory table")
  parser.add_argument("--platform", choices=("cpu", "native"), default="cpu")
  parser.add_argument("--quick", action="store_true", help="small sizes, to check that it runs")
  parser.add_argument(
    "--parts",
    default="scaling,memory,leaderboard",
    help="comma-separated tables to print: scaling, memory, leaderboard (default all)",
  )
  parser.add_argument("--lb-agents", type=int, default=12, help="agents of the leaderboard")
  parser.add_argument("--lb-m", type=int, default=600, help="comparisons of the leaderboard")
  parser.add_argument("--lb-replicas", type=int, default=100, help="leaderboard replicas")
  args = parser.parse_args(argv)
  if args.quick:
    args.n, args.agents, args.m, args.replicas, args.reps, args.memory_n = 40, 10, 300, 8, 1, 400
    args.lb_agents, args.lb_m, args.lb_replicas = 8, 100, 10
  parts = set(args.parts.split(","))
  if "scaling" in parts:
    _scaling_table(args)
  if "memory" in parts:
    _memory_table(args)
  if "leaderboard" in parts:
    _leaderboard_table(args)


# (processes, devices per process) of the leaderboard table: 1 device, 4 in one process, 2 x 2.
LEADERBOARD_CONFIGS = ((1, 1), (1, 4), (2, 2))
# What the replicas decide, compared exactly with the 1-device run (the soft intervals too).
SAME_TABLE = ("p_tc", "p_uc", "tc_verdict", "uc_verdict", "tc_lo", "uc_hi", "order", "candidates")


def _leaderboard_table(args) -> None:
  """A whole ``leaderboard(..., "model", mesh=...)`` (parametric replicas, refitted) per config."""
  task = {"kind": "leaderboard", "agents": args.lb_agents, "m": args.lb_m, "seed": 0}
  task |= {"replicas": args.lb_replicas, "estimator": "model", "reps": args.reps}
  print()
  print(f"leaderboard(key, comparisons, 'model', num_replicas={args.lb_replicas}, mesh=...):")
  print(f"{args.lb_agents} agents, {args.lb_m} comparisons, parametric replicas (each refitted),")
  print("soft intervals; the whole call (fit, replicas, table) after a first call. Best of")
  print(f"{args.reps}. 'same table': {', '.join(SAME_TABLE)} equal to the 1-device run's.")
  print()
  print("| processes x devices | leaderboard s | same table as 1 device |")
  print("|---|---|---|")
  if args.platform == "native":
    runs = [("1 x all", _native_run(task))]
  else:
    runs = [
      (f"{p} x {d}", launch(task, processes=p, local_devices=d, timeout=900)[0])
      for p, d in LEADERBOARD_CONFIGS
    ]
  ref = runs[0][1]
  for name, r in runs:
    same = all(r[k] == ref[k] for k in SAME_TABLE)
    print(
      f"| {name} ({r['devices']} devices) | {r['leaderboard_s']:.2f} | {'yes' if same else 'NO'} |"
    )


def _scaling_table(args) -> None:
  task = {"kind": "bench", "n": args.n, "agents": args.agents, "m": args.m}
  task |= {"replicas": args.replicas, "reps": args.reps}
  print(f"sharded cover: n={args.n}, gamma_c=0.1, float32; bootstrap: {args.replicas} replicas,")
  print(f"{args.agents} agents, {args.m} comparisons, ste_score_fn(tau=0.1). Best of {args.reps}.")
  print()
  print(
    "| processes x devices | cover fwd s | cover fwd+grad s | bootstrap s | "
    "n^3/s per device (fwd) | same as 1 device |"
  )
  print("|---|---|---|---|---|---|")
  if args.platform == "native":
    runs = [((1, "all"), _native_run(task))]
  else:
    runs = [
      ((p, d), launch(task, processes=p, local_devices=d, timeout=900)[0]) for p, d in CONFIGS
    ]
  ref = runs[0][1]
  for (p, d), r in runs:
    same = all(
      abs(r[k] - ref[k]) <= 1e-5 * max(1.0, abs(ref[k]))
      for k in ("cover_sum", "grad_sum", "bootstrap_sum")
    )
    rate = args.n**3 / r["cover_s"] / r["devices"]
    print(
      f"| {p} x {d} ({r['devices']} devices) | {r['cover_s']:.4f} | {r['cover_grad_s']:.4f} | "
      f"{r['bootstrap_s']:.4f} | {rate:.3g} | {'yes' if same else 'NO'} |"
    )


def _memory_table(args) -> None:
  print()
  print(f"XLA's compiled memory per device, sharded cover at n={args.memory_n} (float32, MiB;")
  print("compiled, not run; arguments: this device's share of the inputs as XLA placed them):")
  print()
  print("| devices | fwd arguments | fwd temporaries | fwd output | rev temporaries | rev output |")
  print("|---|---|---|---|---|---|")
  memory = {"kind": "memory", "n": args.memory_n}
  if args.platform == "native":
    counts = [("all", _native_run(memory))]
  else:
    counts = [(d, launch(memory, processes=1, local_devices=d, timeout=900)[0]) for d in (1, 2, 4)]
  for d, r in counts:
    f, b = r["forward"], r["reverse"]
    print(
      f"| {r['devices']} | {_mb(f['argument_bytes'])} | {_mb(f['temp_bytes'])} | "
      f"{_mb(f['output_bytes'])} | {_mb(b['temp_bytes'])} | {_mb(b['output_bytes'])} |"
    )


if __name__ == "__main__":
  if len(sys.argv) > 1 and sys.argv[1] == "worker":
    p = argparse.ArgumentParser()
    p.add_argument("worker")
    p.add_argument("--process-id", type=int, default=0)
    p.add_argument("--processes", type=int, default=1)
    p.add_argument("--coordinator", default=None, help="host:port of process 0's coordinator")
    p.add_argument("--init-timeout", type=int, default=120, help="seconds to wait for the others")
    p.add_argument("--platform", choices=("cpu", "native"), default="cpu")
    p.add_argument("--task", default='{"kind": "check"}', help="JSON task, see run_task")
    worker(p.parse_args())
  else:
    main()
